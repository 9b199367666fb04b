#pragma once
// Slowdown diagnosis: a robust baseline step time, the slowdowns and stalls of the SlowdownRule
// (slowdown_rule.hpp, the same rule `watch` applies live), the pauses
// (evaluation, checkpoint, restart, stall) that are not slowdowns, and for each slowdown its likely
// cause from the thermal samples in its time window, with the numbers and a confidence.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.hpp"
#include "config/slowdown_thresholds.hpp"
#include "config/thermal_thresholds.hpp"
#include "diagnose/thermal_log.hpp"
#include "trainlog/step_series.hpp"

namespace sparkops::diagnose {

struct DiagnoseOptions {
  // The slowdown rule's thresholds (analyze.* config keys), the same watch's live events use.
  config::SlowdownThresholds slowdown;
  double doubled_factor = 2.0;
  // The thermal rule's thresholds (thermal.* config keys), the same the live detector uses.
  config::ThermalThresholds thermal;
};

enum class Cause { thermal, contention, unexplained };
std::string_view cause_name(Cause c);

using Evidence = std::vector<std::pair<std::string, double>>;

struct Slowdown {
  std::size_t first_index = 0;  // into StepSeries::steps
  std::size_t last_index = 0;
  std::int64_t start_step = 0;
  std::int64_t end_step = 0;
  std::optional<SystemTime> start_time;
  std::optional<SystemTime> end_time;
  double median_seconds = 0;
  double ratio = 0;  // median_seconds / baseline
  bool doubled = false;
  Cause cause = Cause::unexplained;
  double confidence = 0;    // 0..1: how sure the cause is
  Evidence evidence;        // named numbers behind the cause
  std::string explanation;  // one line for people
};

// Where a pause sits relative to the run's steps: before the first step (a start-up evaluation), in
// the middle, or at the end (the final evaluation or save, or a marker after the planned total).
enum class PausePosition { before_start, mid_run, at_end };
std::string_view pause_position_name(PausePosition p);

// One interruption of training. Markers with no step between them (nanoGPT's evaluation followed by
// its checkpoint save, DeepSpeed's five lines per save) are one pause; `kinds` names them all.
struct Pause {
  trainlog::MarkerKind kind = trainlog::MarkerKind::eval;
  std::string kinds;  // "eval", "eval+checkpoint", ...
  PausePosition position = PausePosition::mid_run;
  std::optional<std::int64_t> step;
  std::optional<SystemTime> time;
  std::optional<double> duration_seconds;  // as the log states it, else measured from wall times
  std::string detail;
};

// A short run of slow steps (fewer than sustain_steps): a stall, not a slowdown.
struct Stall {
  std::size_t first_index = 0;
  std::int64_t start_step = 0;
  std::int64_t end_step = 0;
  std::optional<SystemTime> time;
  std::size_t measurements = 0;
  double seconds = 0;           // the slowest measurement's seconds per step
  double ratio = 0;             // seconds / baseline
  double duration_seconds = 0;  // time above the baseline pace
};

struct Diagnosis {
  std::optional<double> baseline_seconds;
  std::size_t warmup_skipped = 0;
  std::size_t baseline_samples = 0;  // measurements the baseline is the median of
  std::vector<Slowdown> slowdowns;
  std::vector<Stall> stalls;
  std::optional<double> threshold_seconds;  // what a slow step is (factor or noise bound)
  std::vector<Pause> pauses;
  std::size_t mid_run_pauses = 0;  // pauses at position mid_run (restarts not counted)
  std::vector<std::string> notes;  // why something could not be concluded
};

// `thermal` may be null (no --thermal).
Diagnosis diagnose(const trainlog::StepSeries& series, const ThermalLog* thermal,
                   const DiagnoseOptions& options);

// Exposed for tests: which records each pause affects (the step right after it).
std::vector<std::size_t> paused_record_indices(const trainlog::StepSeries& series);

}  // namespace sparkops::diagnose
