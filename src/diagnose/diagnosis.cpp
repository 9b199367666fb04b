#include "diagnose/diagnosis.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "diagnose/causes.hpp"

namespace sparkops::diagnose {

using trainlog::MarkerKind;
using trainlog::StepRecord;
using trainlog::StepSeries;

namespace {

// A pause's step-time tail (tqdm's smoothed rate stays high for a few updates after a pause) is
// excluded for at most this many records.
constexpr std::size_t kMaxRecoveryTail = 20;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t mid = v.size() / 2;
  return v.size() % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

void collect_pauses(const StepSeries& series, std::optional<double> baseline, Diagnosis& d) {
  const auto& steps = series.steps;
  std::size_t cursor = 0;
  for (const auto& m : series.markers) {
    Pause p{m.kind, m.step, m.time, m.duration_seconds, m.detail};
    if (m.step) {
      std::size_t i = cursor;
      while (i < steps.size() && steps[i].step != *m.step) ++i;
      if (i < steps.size()) {
        cursor = i;
        // Measured: the wall time between the steps around the pause, less the steps' own time.
        if (!p.duration_seconds && baseline && i + 1 < steps.size() && steps[i].time &&
            steps[i + 1].time) {
          const double gap =
              std::chrono::duration<double>(*steps[i + 1].time - *steps[i].time).count();
          const double own =
              static_cast<double>(std::max<std::int64_t>(1, steps[i + 1].step - steps[i].step)) *
              *baseline;
          if (gap - own > 0) p.duration_seconds = std::round((gap - own) * 1000.0) / 1000.0;
        }
      }
    }
    d.pauses.push_back(std::move(p));
  }
}

}  // namespace

std::string_view cause_name(Cause c) {
  switch (c) {
    case Cause::thermal:
      return "thermal";
    case Cause::contention:
      return "contention";
    case Cause::unexplained:
      return "unexplained";
  }
  return "unexplained";
}

std::vector<std::size_t> paused_record_indices(const StepSeries& series) {
  std::vector<std::size_t> out;
  const auto& steps = series.steps;
  std::size_t cursor = 0;
  for (const auto& m : series.markers) {
    if (!m.step) continue;
    std::size_t i = cursor;
    while (i < steps.size() && steps[i].step != *m.step) ++i;
    if (i >= steps.size()) continue;  // a marker for a step the series does not hold
    cursor = i;
    if (i + 1 < steps.size()) out.push_back(i + 1);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Diagnosis diagnose(const StepSeries& series, const ThermalLog* thermal, const DiagnoseOptions& o) {
  Diagnosis d;
  const auto& steps = series.steps;
  const std::size_t n = steps.size();
  std::vector<char> paused(n, 0);
  for (const std::size_t i : paused_record_indices(series)) paused[i] = 1;

  // Baseline: after warm-up, the median over the early part of the run (at least 20 measurements or
  // 20 % of the run), so a slowdown covering most of a long run still stands out.
  std::vector<std::size_t> measured;
  for (std::size_t i = 0; i < n; ++i) {
    if (steps[i].seconds && *steps[i].seconds > 0 && !paused[i]) measured.push_back(i);
  }
  const auto warmup = static_cast<std::size_t>(std::max<std::int64_t>(0, o.warmup_steps));
  d.warmup_skipped = std::min(warmup, measured.size() / 4);
  std::vector<double> base;
  const std::size_t remaining = measured.size() - d.warmup_skipped;
  const std::size_t window = std::max<std::size_t>(20, remaining / 5);
  for (std::size_t k = d.warmup_skipped; k < measured.size() && base.size() < window; ++k) {
    base.push_back(*steps[measured[k]].seconds);
  }
  if (base.empty()) {
    // Every measurement follows a pause (DeepSpeed timing a save every print interval): use them
    // all.
    for (std::size_t i = 0; i < n; ++i) {
      if (steps[i].seconds && *steps[i].seconds > 0) base.push_back(*steps[i].seconds);
    }
    if (!base.empty()) {
      d.notes.push_back("every measurement follows a pause: the baseline includes the pauses");
      d.baseline_seconds = median(base);
      d.baseline_samples = base.size();
      collect_pauses(series, d.baseline_seconds, d);
      return d;
    }
  }
  if (base.empty()) {
    if (series.train_runtime_seconds && n > 0 && steps.back().step > 0) {
      d.baseline_seconds = *series.train_runtime_seconds / static_cast<double>(steps.back().step);
      d.notes.push_back("the log has no per-step times; the baseline is train_runtime / steps");
    } else {
      d.notes.push_back("the log has no per-step times: no slowdown can be measured");
    }
    collect_pauses(series, d.baseline_seconds, d);
    return d;
  }
  d.baseline_seconds = median(base);
  d.baseline_samples = base.size();
  const double baseline = *d.baseline_seconds;
  const double threshold = baseline * o.slowdown_factor;

  // Recovery tails after pauses: excluded while the step time stays above the threshold.
  std::vector<char> excluded = paused;
  for (std::size_t i = 0; i < n; ++i) {
    if (!paused[i]) continue;
    for (std::size_t j = i + 1, k = 0; j < n && k < kMaxRecoveryTail; ++j, ++k) {
      if (!steps[j].seconds || *steps[j].seconds < threshold) break;
      excluded[j] = 1;
    }
  }

  // Runs of slow measurements; one fast measurement inside a run does not end it.
  struct Run {
    std::size_t first = 0, last = 0;
    std::vector<double> values;
  };
  std::vector<Run> runs;
  std::optional<Run> cur;
  std::size_t gap = 0;
  for (std::size_t k = d.warmup_skipped; k < measured.size(); ++k) {
    const std::size_t i = measured[k];
    if (excluded[i]) continue;
    const double s = *steps[i].seconds;
    if (s >= threshold) {
      if (!cur) cur = Run{i, i, {}};
      cur->last = i;
      cur->values.push_back(s);
      gap = 0;
    } else if (cur) {
      if (++gap > 1) {
        runs.push_back(std::move(*cur));
        cur.reset();
        gap = 0;
      }
    }
  }
  if (cur) runs.push_back(std::move(*cur));

  std::optional<Window> base_window;
  if (!base.empty()) {
    const auto& first = steps[measured[d.warmup_skipped]];
    const auto& last =
        steps[measured[std::min(measured.size() - 1, d.warmup_skipped + base.size() - 1)]];
    if (first.time && last.time) base_window = Window{*first.time, *last.time};
  }
  bool warned_no_time = false;
  for (auto& r : runs) {
    if (static_cast<std::int64_t>(r.values.size()) < o.sustain_steps) continue;
    Slowdown sd;
    sd.first_index = r.first;
    sd.last_index = r.last;
    sd.start_step = steps[r.first].step;
    sd.end_step = steps[r.last].step;
    sd.median_seconds = median(r.values);
    sd.ratio = sd.median_seconds / baseline;
    sd.doubled = sd.ratio >= o.doubled_factor;
    // The window opens when the first slow step began.
    if (steps[r.first].time) {
      sd.start_time = steps[r.first].time;
      if (r.first > 0 && steps[r.first - 1].time) sd.start_time = steps[r.first - 1].time;
    }
    sd.end_time = steps[r.last].time;
    if (!thermal) {
      sd.cause = Cause::unexplained;
      sd.confidence = 0;
      sd.explanation = "no thermal samples given (--thermal)";
    } else if (!sd.start_time || !sd.end_time) {
      sd.cause = Cause::unexplained;
      sd.confidence = 0;
      sd.explanation =
          "the log has no wall times to match the samples (pass --start or use a .times sidecar)";
      if (!warned_no_time) d.notes.push_back(sd.explanation);
      warned_no_time = true;
    } else {
      attribute_cause(sd, Window{*sd.start_time, *sd.end_time}, base_window, *thermal, o);
    }
    d.slowdowns.push_back(std::move(sd));
  }
  collect_pauses(series, d.baseline_seconds, d);
  if (thermal && !thermal->samples.empty() && n > 0 && steps.front().time && steps.back().time) {
    if (thermal->samples.back().time < *steps.front().time ||
        thermal->samples.front().time > *steps.back().time) {
      d.notes.push_back(
          "the thermal samples do not overlap the run's time span (check --tz-offset)");
    }
  }
  return d;
}

}  // namespace sparkops::diagnose
