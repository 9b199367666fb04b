#pragma once
// EventTracker: the serve loop's event counters. Each StatusReport becomes a sampling Sample, the
// sampling module's ThrottleDetector runs over consecutive ones, and every episode *start* counts
// once:
//  - sparkops_throttle_events_total{gpu,reason}: sw_power_cap, hw_slowdown, sw_thermal, hw_thermal,
//    hw_power_brake, platform_cap;
//  - sparkops_slowdown_events_total{gpu,reason}: unflagged_low_clock, unflagged_low_power;
//  - sparkops_contention_events_total: the number of heavy workloads went from <= 1 to >= 2 (the
//    one-heavy-job rule started being broken), plus every event the workloads ContentionTracker
//    sees across consecutive reports (PSI memory rising, major faults, refaults, swap-in, a
//    workload's memory falling sharply or vanishing, the kernel's oom_kill counter moving).
//  - sparkops_gpu_hang_events_total: gpu_hung episodes (a driver call out past its watchdog).
// gpu_lost / host_sensor_lost episodes are not throttling and are not counted here.
// It also keeps the last kRecentEvents events of every kind (both edges of each episode) as lines
// for the dashboard's recent-events list.
// Every reason starts at 0 for each GPU seen, so rate() works from the first event.
// Not thread-safe: the serve loop's thread owns it.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <utility>

#include "exporter/history.hpp"
#include "exporter/metrics_builder.hpp"
#include "sampling/sample.hpp"
#include "sampling/throttle_detector.hpp"
#include "status/status_report.hpp"
#include "workloads/contention.hpp"

namespace sparkops::exporter {

// The Sample the detector needs, built from a report (no second read of the machine).
sampling::Sample sample_from_report(const status::StatusReport& report, std::uint64_t tick,
                                    SteadyTime steady);
// The values ContentionTracker compares between two reports (PSI, vmstat counters, workloads).
workloads::ContentionReading contention_reading_from_report(const status::StatusReport& report,
                                                            SteadyTime steady);

class EventTracker {
 public:
  explicit EventTracker(sampling::DetectorConfig config = {});
  static constexpr std::size_t kRecentEvents = 50;

  void observe(const status::StatusReport& report, SteadyTime steady);
  EventTotals totals() const;
  // Oldest first, at most kRecentEvents.
  std::vector<RecentEvent> recent() const { return {recent_.begin(), recent_.end()}; }

 private:
  sampling::ThrottleDetector detector_;
  std::optional<sampling::Sample> previous_;
  std::uint64_t tick_ = 0;
  std::map<std::pair<unsigned, sampling::ThrottleCause>, std::uint64_t> counts_;
  bool gpu_seen_ = false;
  bool scan_seen_ = false;
  bool contended_ = false;
  std::uint64_t contention_ = 0;
  std::uint64_t gpu_hangs_ = 0;
  workloads::ContentionTracker contention_tracker_;
  std::deque<RecentEvent> recent_;
  void remember(SystemTime at, std::string kind, std::string detail);
};

}  // namespace sparkops::exporter
