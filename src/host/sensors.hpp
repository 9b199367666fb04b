#pragma once
// Summaries over hwmon chips and thermal zones that status, sample and the exporter share.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "host/hwmon.hpp"
#include "host/thermal_zone.hpp"

namespace sparkops::host {

struct SensorReading {
  std::string
      name;  // "spbm/soc", "acpitz/temp1" (chip/label, else chip/tempN), "thermal_zone0(acpitz)"
  std::int64_t temp_millicelsius = 0;
};

// The hottest plausible temperature (-40..150 C) among hwmon temp channels and thermal zones.
// spbm's "tj_max_c" is headroom to the limit, not a temperature, and is skipped. Ties keep the
// first (hwmon chips in index order, then zones). nullopt when nothing reads.
std::optional<SensorReading> hottest_sensor(const std::vector<HwmonChip>& chips,
                                            const std::vector<ThermalZone>& zones);

struct PowerRail {
  std::string name;  // spbm label: "sys_total", "soc_pkg", "cpu_gpu", "cpu_p", "cpu_e", "vcore",
                     // "dc_input", "gpu", "prereg", "dla"
  std::uint64_t power_microwatts = 0;
};

// The spbm rails, matched by label (channel numbers differ between driver versions), in the order
// listed above; rails the driver does not expose are left out. Empty without an "spbm" chip.
std::vector<PowerRail> spbm_rails(const std::vector<HwmonChip>& chips);

// One firmware power limit controller of spbm ("pl1", "pl2", "syspl1", "syspl2").
struct SpbmLimit {
  std::string name;
  std::optional<std::uint64_t> value_microwatts;  // the channel's input (limit value or EWMA power,
                                                  // depending on the driver version)
  std::optional<std::uint64_t> ewma_microwatts;   // "ewma_<name>" channel when exposed
  std::optional<std::uint64_t> cap_microwatts;    // powerN_cap: the effective limit
  std::optional<std::uint64_t> max_microwatts;    // powerN_max: the EC default
};

struct SpbmStatus {
  std::optional<std::uint64_t> prochot;   // 0 = normal; non-zero = PROCHOT asserted (throttling)
  std::optional<std::uint64_t> pl_level;  // active power-limit level
  std::vector<SpbmLimit> limits;          // pl1, pl2, syspl1, syspl2 when present
  std::vector<PowerRail> budgets;  // "budget_cpu", "budget_gpu", "budget_cpu_e", "budget_cpu_p"
};

// nullopt without an "spbm" chip.
std::optional<SpbmStatus> spbm_status(const std::vector<HwmonChip>& chips);

}  // namespace sparkops::host
