#include "gpu/throttle_reasons.hpp"

#include <fmt/format.h>

namespace sparkops::gpu {

std::vector<std::string> reason_names(std::uint64_t mask) {
  static constexpr std::pair<std::uint64_t, std::string_view> kNames[] = {
      {kReasonGpuIdle, "gpu_idle"},           {kReasonApplicationsClocks, "applications_clocks"},
      {kReasonSwPowerCap, "sw_power_cap"},    {kReasonHwSlowdown, "hw_slowdown"},
      {kReasonSyncBoost, "sync_boost"},       {kReasonSwThermal, "sw_thermal"},
      {kReasonHwThermal, "hw_thermal"},       {kReasonHwPowerBrake, "hw_power_brake"},
      {kReasonDisplayClock, "display_clock"},
  };
  std::vector<std::string> out;
  std::uint64_t known = 0;
  for (const auto& [bit, name] : kNames) {
    known |= bit;
    if (mask & bit) out.emplace_back(name);
  }
  for (int b = 0; b < 64; ++b) {
    const std::uint64_t bit = 1ULL << b;
    if ((mask & bit) && !(known & bit)) out.push_back(fmt::format("0x{:x}", bit));
  }
  return out;
}

std::string reason_names_joined(std::uint64_t mask, std::string_view sep) {
  const auto names = reason_names(mask);
  if (names.empty()) return "none";
  return fmt::format("{}", fmt::join(names, sep));
}

std::string_view reason_words(std::string_view name) {
  // nvml.h: nvmlClocksEventReasonGpuIdle "Nothing is running on the GPU", ApplicationsClocksSetting
  // "GPU clocks are limited by current setting of applications clocks", SwPowerCap "SW Power
  // Scaling algorithm is reducing the clocks", HwSlowdown "HW Slowdown (reducing the core clocks by
  // a factor of 2 or more)", SyncBoost "Sync Boost", SwThermalSlowdown, HwThermalSlowdown,
  // HwPowerBrakeSlowdown "HW Power Brake Slowdown (External Power Brake Assertion)",
  // DisplayClockSetting "GPU clocks are limited by current setting of Display clocks".
  static constexpr std::pair<std::string_view, std::string_view> kWords[] = {
      {"gpu_idle", "idle"},
      {"applications_clocks", "application clocks setting"},
      {"sw_power_cap", "software power cap"},
      {"hw_slowdown", "hardware slowdown"},
      {"sync_boost", "sync boost"},
      {"sw_thermal", "software thermal slowdown"},
      {"hw_thermal", "hardware thermal slowdown"},
      {"hw_power_brake", "hardware power brake (external)"},
      {"display_clock", "display clock setting"},
  };
  for (const auto& [n, words] : kWords) {
    if (n == name) return words;
  }
  return name;
}

std::string reason_words_joined(std::uint64_t mask, std::string_view sep) {
  const auto names = reason_names(mask);
  if (names.empty()) return "none";
  std::string out;
  for (const auto& n : names) {
    if (!out.empty()) out += sep;
    out += reason_words(n);
  }
  return out;
}

}  // namespace sparkops::gpu
