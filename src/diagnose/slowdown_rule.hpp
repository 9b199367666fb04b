#pragma once
// SlowdownRule: the one rule that decides what is a slowdown and what is a stall, used offline by
// `analyze` (diagnosis.cpp) and live by `watch` (live_slowdown.cpp). It is fed one measurement at a
// time (seconds per step at a step, and how many steps the measurement covers) and emits events.
//
//  * Baseline: the median of the first `baseline_samples` measurements after `warmup_steps`,
//    frozen once taken (the run's own calm pace). Those measurements are then judged against it
//    like every later one, so a slowdown that begins inside the window is still found.
//  * A measurement is slow when it is at least `slowdown_factor` x the baseline and beyond the
//    baseline window's own noise: `noise_sigmas` robust standard deviations (1.4826 x the median
//    absolute deviation), so a run whose steps normally vary by 40 % is not slow at +30 %.
//  * An episode is a stretch of slow measurements; one measurement that is not slow may sit between
//    two slow ones. It ends after two measurements in a row that are not slow, or, once it was
//    confirmed as a slowdown, after `min_steps` of them (a recovery must be sustained too).
//  * A slowdown is an episode with at least `min_steps` slow measurements AND slow measurements
//    taking at least `min_wall_share` of the episode's wall time (so a pace that only flickers
//    above the threshold is not one). It is reported when both first hold (live and offline alike).
//  * An episode that ends with fewer slow measurements is a stall: its duration is the time above
//    the baseline pace. One stalled step, an evaluation or a checkpoint pause is therefore never a
//    slowdown. A measurement marked `paused` (the step after a pause marker) is skipped, and so are
//    the slow measurements right after it (at most 20: tqdm's smoothed rate stays high for a few
//    updates after a pause).

#include <cstdint>
#include <optional>
#include <vector>

#include "base/clock.hpp"
#include "config/slowdown_thresholds.hpp"

namespace sparkops::diagnose {

struct SlowdownRuleOptions {
  // slowdown_factor, sustain_steps (`min_steps` above), min_wall_share, noise_sigmas and
  // warmup_steps: the analyze.* config section.
  config::SlowdownThresholds thresholds;
  std::size_t baseline_samples = 20;
};

struct Measurement {
  std::size_t index = 0;  // the caller's id (a StepSeries index)
  std::int64_t step = 0;
  double seconds = 0;      // seconds per step
  std::int64_t steps = 1;  // steps the measurement covers (a log interval of 10 covers 10)
  std::optional<SystemTime> time;
  bool paused = false;  // right after a pause: skipped
};

enum class RuleEventKind { slowdown_start, slowdown_end, stall };

struct RuleEvent {
  RuleEventKind kind = RuleEventKind::stall;
  std::size_t first_index = 0;  // first slow measurement of the episode
  std::size_t last_index =
      0;  // last slow measurement seen (for slowdown_start: the confirming one)
  std::int64_t first_step = 0;
  std::int64_t last_step = 0;
  std::optional<SystemTime> first_time;
  std::optional<SystemTime> last_time;
  std::size_t slow_measurements = 0;
  double median_seconds = 0;  // of the slow measurements
  double baseline_seconds = 0;
  double ratio = 0;
  double wall_share = 0;      // slow measurements' share of the episode's wall time
  double excess_seconds = 0;  // time above the baseline pace (a stall's duration)
};

class SlowdownRule {
 public:
  explicit SlowdownRule(SlowdownRuleOptions options = {});

  void feed(const Measurement& m, std::vector<RuleEvent>& out);
  // Closes an open episode (the end of the log). Live callers need not call it.
  void finish(std::vector<RuleEvent>& out);

  std::optional<double> baseline_seconds() const { return baseline_; }
  std::optional<double> threshold_seconds() const { return threshold_; }
  std::size_t baseline_count() const { return baseline_count_; }
  std::size_t warmup_skipped() const { return warmup_skipped_; }
  bool in_slowdown() const { return confirmed_; }
  // Sets the baseline from the measurements collected so far when the stream ends before
  // `baseline_samples` were seen (a short log), and judges them; false when there were none.
  bool settle_baseline(std::vector<RuleEvent>& out);

 private:
  struct Slow {
    std::size_t index;
    std::int64_t step;
    double seconds;
    std::int64_t steps;
    std::optional<SystemTime> time;
  };
  void close(std::vector<RuleEvent>& out);
  void judge(const Measurement& m, std::vector<RuleEvent>& out);
  RuleEvent event(RuleEventKind kind) const;

  SlowdownRuleOptions o_;
  std::int64_t seen_ = 0;
  std::size_t warmup_skipped_ = 0;
  std::vector<Measurement> calm_;
  std::optional<double> baseline_;
  std::optional<double> threshold_;
  std::size_t baseline_count_ = 0;
  // The open episode.
  std::vector<Slow> slow_;
  double slow_wall_ = 0;
  double span_wall_ = 0;
  double gap_wall_ = 0;  // wall time of the not-slow measurements since the last slow one
  std::int64_t gap_ = 0;
  bool confirmed_ = false;
  std::size_t recovering_ = 0;  // slow measurements still skipped after a pause
};

}  // namespace sparkops::diagnose
