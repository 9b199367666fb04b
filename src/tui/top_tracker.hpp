#pragma once
// TopTracker: turns the StatusReport of each refresh into the TopModel a frame shows. It keeps
// what one report cannot tell: history for the sparklines, the sampling module's ThrottleDetector
// over consecutive reports (counter deltas, open episodes, the platform-cap signature), the
// workloads ContentionTracker (PSI rising, refaults, swap-in, evictions, OOM kills), totals since
// start and a bounded list of recent events. Pure: no clock, no I/O; not thread-safe.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>

#include "sampling/sample.hpp"
#include "sampling/throttle_detector.hpp"
#include "tui/top_model.hpp"
#include "workloads/contention.hpp"

namespace sparkops::tui {

struct TrackerOptions {
  std::size_t history_points = 240;  // the widest sparkline a 160-column frame draws, and more
  std::size_t event_capacity = 100;
  Thresholds thresholds;
};

class TopTracker {
 public:
  explicit TopTracker(TrackerOptions options = {});
  // `steady` is when the report was collected (steady clock), for rates and the detector.
  void observe(status::StatusReport report, SteadyTime steady);
  const TopModel& model() const { return model_; }

 private:
  void push_event(SystemTime time, EventSeverity severity, std::string text);
  void track_gpus(const sampling::Sample& sample,
                  const std::vector<sampling::ThrottleEvent>& events);
  void track_since_start(const status::StatusReport& report, const sampling::Sample& sample);
  void track_workloads(const status::StatusReport& report);

  TrackerOptions options_;
  TopModel model_;
  sampling::ThrottleDetector detector_;
  workloads::ContentionTracker contention_;
  std::optional<sampling::Sample> previous_;
  std::optional<host::Vmstat> baseline_;
  std::optional<std::uint64_t> previous_refaults_;
  std::optional<SteadyTime> first_steady_;
  std::set<std::uint32_t> workload_pids_;
  bool workloads_seen_ = false;
  bool contended_ = false;
};

}  // namespace sparkops::tui
