#pragma once
// LiveSlowdownDetector: the SlowdownRule (slowdown_rule.hpp) that `analyze` applies offline, fed
// step by step while a run is going (`sparkops watch`). The baseline is the median of the first
// `baseline_samples` measurements after `warmup_steps`, frozen once taken. Edges: a slowdown starts
// when the rule confirms it and ends after a sustained recovery; a stall is reported when a short
// slow stretch ends. Pure: no clock, no I/O.

#include <cstdint>
#include <optional>
#include <vector>

#include "base/clock.hpp"
#include "diagnose/slowdown_rule.hpp"

namespace sparkops::diagnose {

struct LiveSlowdownOptions {
  config::SlowdownThresholds slowdown;  // the analyze.* config section, as `analyze` applies it
  // Live the run's length is unknown: the baseline is the median of this many measurements.
  std::size_t baseline_samples = 10;
};

enum class SlowdownEdge { start, end, stall };

struct LiveSlowdownEvent {
  SlowdownEdge edge = SlowdownEdge::start;
  std::int64_t step = 0;           // the measurement that confirmed the edge
  std::int64_t first_step = 0;     // the first slow step of the streak
  std::optional<SystemTime> time;  // when the streak began
  double seconds = 0;              // median of the streak's slow measurements
  double baseline_seconds = 0;
  double ratio = 0;          // seconds / baseline
  double stall_seconds = 0;  // for a stall: the time above the baseline pace
};

class LiveSlowdownDetector {
 public:
  explicit LiveSlowdownDetector(LiveSlowdownOptions options = {});

  // One measurement (seconds per step at `step`). Returns an edge when one is confirmed.
  std::optional<LiveSlowdownEvent> feed(std::int64_t step, double seconds,
                                        std::optional<SystemTime> time);

  std::optional<double> baseline_seconds() const { return rule_.baseline_seconds(); }
  std::optional<double> last_seconds() const { return last_; }
  bool in_slowdown() const { return rule_.in_slowdown(); }
  std::size_t slowdowns() const { return count_; }
  std::size_t stalls() const { return stalls_; }

 private:
  SlowdownRule rule_;
  std::optional<double> last_;
  std::optional<std::int64_t> last_step_;
  std::size_t count_ = 0;
  std::size_t stalls_ = 0;
  std::size_t index_ = 0;
  std::vector<RuleEvent> events_;
};

}  // namespace sparkops::diagnose
