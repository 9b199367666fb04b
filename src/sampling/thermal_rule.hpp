#pragma once
// The thermal rule: the platform-cap signature and the unflagged slow states, judged from numbers
// against ThermalThresholds. The live ThrottleDetector (throttle_detector.hpp) and `analyze`'s
// cause attribution (diagnose/causes.cpp) both ask these functions, so the same samples get the
// same verdict online and offline; what differs is only where the numbers come from (the detector's
// last few samples, or the medians of a slowdown window against its baseline window).
//
// docs/domain.md "Thermals and throttling": the platform cap shows as the temperature climbing (or
// already high) while power stays flat at the ceiling, well under the rated power, under load. A
// rising temperature with power still near its peak, away from the ceiling, is not the cap.

#include <optional>

#include "config/thermal_thresholds.hpp"

namespace sparkops::sampling {

// Power within ceiling_band_watts of ceiling_watts and below rated_watts.
bool at_power_ceiling(const config::ThermalThresholds& t, double watts);
bool is_hot(const config::ThermalThresholds& t, double celsius);
// A rise of at least climb_celsius.
bool is_climbing(const config::ThermalThresholds& t, double rise_celsius);
bool is_busy(const config::ThermalThresholds& t, double util_percent);
// SM clock below low_clock_ratio x `reference_mhz` (its max, or the clock of a calm period).
bool is_low_clock(const config::ThermalThresholds& t, double clock_mhz, double reference_mhz);
// Power below low_power_ratio x `reference_watts` (the run's own earlier level under load).
bool is_low_power(const config::ThermalThresholds& t, double watts, double reference_watts);

struct CapEvidence {
  bool power_at_ceiling = false;      // the power the caller judged held at the ceiling
  std::optional<double> temp_c;       // the temperature now (or the window's median)
  std::optional<double> temp_rise_c;  // its rise over the reference (absent: unknown)
  std::optional<bool> busy;           // under load; absent when utilisation is not recorded
};

struct CapVerdict {
  bool hot = false;
  bool climbing = false;
  bool signature = false;  // the platform cap: at the ceiling, hot or climbing, not idle
};

CapVerdict platform_cap(const config::ThermalThresholds& t, const CapEvidence& e);

}  // namespace sparkops::sampling
