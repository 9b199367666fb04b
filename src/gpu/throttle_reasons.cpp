#include "gpu/throttle_reasons.hpp"

#include <fmt/format.h>

namespace sparkops {

std::vector<std::string> reason_names(std::uint64_t mask) {
  static constexpr std::pair<std::uint64_t, std::string_view> kNames[] = {
      {kReasonGpuIdle, "gpu_idle"},       {kReasonApplicationsClocks, "applications_clocks"},
      {kReasonSwPowerCap, "sw_power_cap"}, {kReasonHwSlowdown, "hw_slowdown"},
      {kReasonSyncBoost, "sync_boost"},   {kReasonSwThermal, "sw_thermal"},
      {kReasonHwThermal, "hw_thermal"},   {kReasonHwPowerBrake, "hw_power_brake"},
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

}  // namespace sparkops
