#include "sampling/thermal_rule.hpp"

#include <cmath>

namespace sparkops::sampling {

bool at_power_ceiling(const config::ThermalThresholds& t, double watts) {
  return std::fabs(watts - t.ceiling_watts) <= t.ceiling_band_watts && watts < t.rated_watts;
}

bool is_hot(const config::ThermalThresholds& t, double celsius) {
  return celsius >= t.hot_celsius;
}

bool is_climbing(const config::ThermalThresholds& t, double rise_celsius) {
  return rise_celsius >= t.climb_celsius;
}

bool is_busy(const config::ThermalThresholds& t, double util_percent) {
  return util_percent >= t.busy_util_percent;
}

bool is_low_clock(const config::ThermalThresholds& t, double clock_mhz, double reference_mhz) {
  return reference_mhz > 0 && clock_mhz < t.low_clock_ratio * reference_mhz;
}

bool is_low_power(const config::ThermalThresholds& t, double watts, double reference_watts) {
  return reference_watts > 0 && watts < t.low_power_ratio * reference_watts;
}

CapVerdict platform_cap(const config::ThermalThresholds& t, const CapEvidence& e) {
  CapVerdict v;
  v.hot = e.temp_c && is_hot(t, *e.temp_c);
  v.climbing = e.temp_rise_c && is_climbing(t, *e.temp_rise_c);
  v.signature = e.power_at_ceiling && (v.hot || v.climbing) && e.busy.value_or(true);
  return v;
}

}  // namespace sparkops::sampling
