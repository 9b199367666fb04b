#include "config/thermal_thresholds.hpp"

namespace sparkops::config {

ThermalThresholds thermal_thresholds(const Config& config) {
  ThermalThresholds t;
  t.rated_watts = config.get_number("thermal.rated_watts");
  t.ceiling_watts = config.get_number("thermal.ceiling_watts");
  t.ceiling_band_watts = config.get_number("thermal.ceiling_band_watts");
  t.hot_celsius = config.get_number("thermal.hot_celsius");
  t.busy_util_percent = config.get_number("thermal.busy_util_percent");
  t.low_clock_ratio = config.get_number("thermal.low_clock_ratio");
  t.low_power_ratio = config.get_number("thermal.low_power_ratio");
  return t;
}

}  // namespace sparkops::config
