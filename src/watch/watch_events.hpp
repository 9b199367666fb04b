#pragma once
// The event lines `sparkops watch` adds to the throttle events (events.log and stderr), in the same
// shape as format_event_line: `<ISO-8601 UTC ms> start|end cause=<cause> key=value...`, with
// cause=slowdown (step time against the run's own baseline, plus the thermal sample at that moment)
// and cause=memory_pressure. Pure functions of their inputs.

#include <optional>
#include <string>

#include "base/clock.hpp"
#include "diagnose/live_slowdown.hpp"
#include "sampling/sample.hpp"

namespace sparkops::watch {

// "gpu_temp_c=81 power_w=11.17 sm_clock_mhz=2405 host_hottest_c=79.5 mem_available_gib=20.1"; the
// keys the sample has. Empty when `sample` is null.
std::string thermal_evidence(const sampling::Sample* sample);

// "2025-11-09T09:26:12.345Z start cause=slowdown step=120 first_step=116 seconds=0.500
//  baseline_s=0.100 ratio=5.00 gpu_temp_c=..."
std::string format_slowdown_event(const diagnose::LiveSlowdownEvent& e, SystemTime now,
                                  const sampling::Sample* latest);

struct PressureThresholds {
  double psi_share = 0.10;        // PSI memory "some" time over the interval
  double available_share = 0.05;  // MemAvailable / MemTotal below this
};

// Memory pressure episodes over the sample stream: on while PSI "some" stalls take at least
// psi_share of the interval or MemAvailable is below available_share of MemTotal.
class PressureTracker {
 public:
  explicit PressureTracker(PressureThresholds t) : t_(t) {}
  // An event line when an episode starts or ends at this sample.
  std::optional<std::string> feed(const sampling::Sample& sample);
  // Ends an open episode (the run is over).
  std::optional<std::string> finish(SystemTime now);

 private:
  PressureThresholds t_;
  bool on_ = false;
};

}  // namespace sparkops::watch
