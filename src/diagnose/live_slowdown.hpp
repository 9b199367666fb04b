#pragma once
// LiveSlowdownDetector: the slowdown rule of `analyze` (diagnosis.hpp) applied step by step while a
// run is going (`sparkops watch`). The baseline is the median of the first `baseline_samples`
// measurements after `warmup_steps`, frozen once taken (the run's own calm pace). A slowdown starts
// when `sustain_steps` consecutive measurements are at least `slowdown_factor` x the baseline, and
// ends after `sustain_steps` consecutive measurements below it. Pure: no clock, no I/O.

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "base/clock.hpp"

namespace sparkops::diagnose {

struct LiveSlowdownOptions {
  double slowdown_factor = 1.3;
  std::int64_t sustain_steps = 5;
  std::int64_t warmup_steps = 5;
  std::size_t baseline_samples = 10;
};

enum class SlowdownEdge { start, end };

struct LiveSlowdownEvent {
  SlowdownEdge edge = SlowdownEdge::start;
  std::int64_t step = 0;           // the measurement that confirmed the edge
  std::int64_t first_step = 0;     // the first step of the streak
  std::optional<SystemTime> time;  // when the streak began
  double seconds = 0;              // median of the streak's measurements
  double baseline_seconds = 0;
  double ratio = 0;  // seconds / baseline
};

class LiveSlowdownDetector {
 public:
  explicit LiveSlowdownDetector(LiveSlowdownOptions options = {});

  // One measurement (seconds per step at `step`). Returns an edge when one is confirmed.
  std::optional<LiveSlowdownEvent> feed(std::int64_t step, double seconds,
                                        std::optional<SystemTime> time);

  std::optional<double> baseline_seconds() const { return baseline_; }
  std::optional<double> last_seconds() const { return last_; }
  bool in_slowdown() const { return slow_; }
  std::size_t slowdowns() const { return count_; }

 private:
  struct Point {
    std::int64_t step;
    double seconds;
    std::optional<SystemTime> time;
  };
  LiveSlowdownOptions options_;
  std::int64_t measured_ = 0;
  std::vector<double> calm_;
  std::optional<double> baseline_;
  std::optional<double> last_;
  std::deque<Point> streak_;  // consecutive measurements on the other side of the threshold
  bool slow_ = false;
  std::size_t count_ = 0;
};

}  // namespace sparkops::diagnose
