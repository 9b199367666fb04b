#pragma once
// The [thermal] config section as one typed value: the thresholds of the thermal rule
// (sampling/thermal_rule.hpp) that both the live throttle detector and `analyze`'s cause
// attribution apply. The member initialisers below are the only place these defaults are written:
// the key table (config_keys.cpp) prints them as the keys' default text.

#include "config/config.hpp"

namespace sparkops::config {

struct ThermalThresholds {
  // GB10: rated 240 W, sustained ceiling about 100 W under long load (docs/domain.md "Thermals and
  // throttling"); the band is the spread of the 1 s power average seen while pinned there.
  double rated_watts = 240.0;        // thermal.rated_watts
  double ceiling_watts = 100.0;      // thermal.ceiling_watts
  double ceiling_band_watts = 12.0;  // thermal.ceiling_band_watts
  double hot_celsius = 80.0;         // thermal.hot_celsius
  double busy_util_percent = 80.0;   // thermal.busy_util_percent
  double low_clock_ratio = 0.6;      // thermal.low_clock_ratio
  double low_power_ratio = 0.6;      // thermal.low_power_ratio
  // A rise that counts as "the temperature climbs": twice the 1 C step of the integer readings
  // nvidia-smi and NVML report, so one quantisation step (a reading flickering between two
  // degrees) never counts as a climb. Not a config key.
  double climb_celsius = 2.0;
};

// The thermal.* values in effect (defaults, files, flags).
ThermalThresholds thermal_thresholds(const Config& config);

}  // namespace sparkops::config
