#include "host/sensors.hpp"

#include <fmt/format.h>

namespace sparkops::host {

namespace {

constexpr std::int64_t kMinPlausible = -40000;
constexpr std::int64_t kMaxPlausible = 150000;

bool plausible(std::int64_t millicelsius) {
  return millicelsius >= kMinPlausible && millicelsius <= kMaxPlausible;
}

constexpr std::string_view kRails[] = {"sys_total", "soc_pkg",  "cpu_gpu", "cpu_p",  "cpu_e",
                                       "vcore",     "dc_input", "gpu",     "prereg", "dla"};
constexpr std::string_view kLimits[] = {"pl1", "pl2", "syspl1", "syspl2"};
constexpr std::string_view kBudgets[] = {"budget_cpu", "budget_gpu", "budget_cpu_e",
                                         "budget_cpu_p"};

}  // namespace

std::optional<SensorReading> hottest_sensor(const std::vector<HwmonChip>& chips,
                                            const std::vector<ThermalZone>& zones) {
  std::optional<SensorReading> best;
  const auto offer = [&](std::int64_t value, const auto& make_name) {
    if (!plausible(value)) return;
    if (!best || value > best->temp_millicelsius) best = SensorReading{make_name(), value};
  };
  for (const auto& chip : chips) {
    for (const auto& t : chip.temps) {
      if (chip.name == "spbm" && t.label == "tj_max_c") continue;
      offer(t.input_millicelsius, [&] {
        return t.label ? fmt::format("{}/{}", chip.name, *t.label)
                       : fmt::format("{}/temp{}", chip.name, t.index);
      });
    }
  }
  for (const auto& zone : zones) {
    if (!zone.temp_millicelsius) continue;
    offer(*zone.temp_millicelsius, [&] { return fmt::format("{}({})", zone.zone, zone.type); });
  }
  return best;
}

std::vector<PowerRail> spbm_rails(const std::vector<HwmonChip>& chips) {
  std::vector<PowerRail> rails;
  const HwmonChip* chip = find_chip(chips, "spbm");
  if (chip == nullptr) return rails;
  for (const auto name : kRails) {
    if (const HwmonPower* p = chip->power_by_label(name)) {
      rails.push_back({std::string(name), p->reading_microwatts()});
    }
  }
  return rails;
}

std::optional<SpbmStatus> spbm_status(const std::vector<HwmonChip>& chips) {
  const HwmonChip* chip = find_chip(chips, "spbm");
  if (chip == nullptr) return std::nullopt;
  SpbmStatus out;
  if (const auto it = chip->status.find("prochot"); it != chip->status.end())
    out.prochot = it->second;
  if (const auto it = chip->status.find("pl_level"); it != chip->status.end())
    out.pl_level = it->second;
  for (const auto name : kLimits) {
    const HwmonPower* p = chip->power_by_label(name);
    const HwmonPower* ewma = chip->power_by_label(fmt::format("ewma_{}", name));
    if (p == nullptr && ewma == nullptr) continue;
    SpbmLimit limit;
    limit.name = std::string(name);
    if (p != nullptr) {
      limit.value_microwatts = p->reading_microwatts();
      limit.cap_microwatts = p->cap_microwatts;
      limit.max_microwatts = p->max_microwatts;
    }
    if (ewma != nullptr) limit.ewma_microwatts = ewma->reading_microwatts();
    out.limits.push_back(std::move(limit));
  }
  for (const auto name : kBudgets) {
    if (const HwmonPower* p = chip->power_by_label(name)) {
      out.budgets.push_back({std::string(name), p->reading_microwatts()});
    }
  }
  return out;
}

}  // namespace sparkops::host
