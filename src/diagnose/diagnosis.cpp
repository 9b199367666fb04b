#include "diagnose/diagnosis.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "diagnose/causes.hpp"
#include "diagnose/slowdown_rule.hpp"

namespace sparkops::diagnose {

using trainlog::MarkerKind;
using trainlog::StepRecord;
using trainlog::StepSeries;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t mid = v.size() / 2;
  return v.size() % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

void collect_pauses(const StepSeries& series, std::optional<double> baseline, Diagnosis& d) {
  const auto& steps = series.steps;
  const trainlog::RunRange run = trainlog::primary_run(series);
  std::optional<std::int64_t> first, last;
  if (run.end > run.begin) {
    first = steps[run.begin].step;
    last = steps[run.end - 1].step;
  }
  // The run's end: its planned total when the log states one (and the run got there or stopped
  // short of it), else the last step shown.
  std::optional<std::int64_t> end = last;
  if (series.total_steps && last && *series.total_steps >= *last) end = series.total_steps;
  std::size_t cursor = 0;
  const trainlog::Marker* prev = nullptr;
  for (const auto& m : series.markers) {
    const bool same_gap = prev && prev->steps_before == m.steps_before && prev->step == m.step &&
                          prev->kind != MarkerKind::restart && m.kind != MarkerKind::restart &&
                          !d.pauses.empty();
    prev = &m;
    if (same_gap) {
      Pause& p = d.pauses.back();
      const std::string_view name = trainlog::marker_kind_name(m.kind);
      if (p.kinds.find(name) == std::string::npos) p.kinds += "+" + std::string(name);
      if (!p.duration_seconds) p.duration_seconds = m.duration_seconds;
      continue;
    }
    Pause p{m.kind,
            std::string(trainlog::marker_kind_name(m.kind)),
            PausePosition::mid_run,
            m.step,
            m.time,
            m.duration_seconds,
            m.detail};
    if (!m.step || (first && *m.step < *first)) {
      p.position = PausePosition::before_start;
    } else if (end && *m.step >= *end) {
      p.position = PausePosition::at_end;
    }
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
    if (p.position == PausePosition::mid_run && p.kind != MarkerKind::restart) ++d.mid_run_pauses;
    d.pauses.push_back(std::move(p));
  }
}

}  // namespace

std::string_view pause_position_name(PausePosition p) {
  switch (p) {
    case PausePosition::before_start:
      return "before_start";
    case PausePosition::mid_run:
      return "mid_run";
    case PausePosition::at_end:
      return "at_end";
  }
  return "mid_run";
}

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

  std::vector<std::size_t> measured;
  for (std::size_t i = 0; i < n; ++i) {
    if (steps[i].seconds && *steps[i].seconds > 0 && !paused[i]) measured.push_back(i);
  }
  // Offline the length is known: warm-up takes at most a quarter of the measurements and the
  // baseline window is the early part of the run (at least 20 measurements or 20 %), so a slowdown
  // covering most of a long run still stands out. The rule itself is the live one.
  SlowdownRuleOptions ro;
  ro.thresholds = o.slowdown;
  const auto warmup = static_cast<std::size_t>(std::max<std::int64_t>(0, o.slowdown.warmup_steps));
  ro.thresholds.warmup_steps = static_cast<std::int64_t>(std::min(warmup, measured.size() / 4));
  ro.baseline_samples = std::max<std::size_t>(
      20, (measured.size() - static_cast<std::size_t>(ro.thresholds.warmup_steps)) / 5);
  SlowdownRule rule(ro);
  std::vector<RuleEvent> events;
  for (std::size_t i = 0; i < n; ++i) {
    if (!steps[i].seconds || !(*steps[i].seconds > 0)) continue;
    Measurement m;
    m.index = i;
    m.step = steps[i].step;
    m.seconds = *steps[i].seconds;
    m.steps = i > 0 && steps[i].step > steps[i - 1].step ? steps[i].step - steps[i - 1].step : 1;
    m.time = steps[i].time;
    m.paused = paused[i] != 0;
    rule.feed(m, events);
  }
  if (!rule.baseline_seconds()) rule.settle_baseline(events);
  rule.finish(events);
  d.warmup_skipped = rule.warmup_skipped();
  if (!rule.baseline_seconds()) {
    std::vector<double> base;
    for (std::size_t i = 0; i < n; ++i) {
      if (steps[i].seconds && *steps[i].seconds > 0) base.push_back(*steps[i].seconds);
    }
    if (!base.empty()) {
      // Every measurement follows a pause (DeepSpeed timing a save every print interval).
      d.notes.push_back("every measurement follows a pause: the baseline includes the pauses");
      d.baseline_seconds = median(base);
      d.baseline_samples = base.size();
    } else if (series.train_runtime_seconds && n > 0 && steps.back().step > 0) {
      d.baseline_seconds = *series.train_runtime_seconds / static_cast<double>(steps.back().step);
      d.notes.push_back("the log has no per-step times; the baseline is train_runtime / steps");
    } else {
      d.notes.push_back("the log has no per-step times: no slowdown can be measured");
    }
    collect_pauses(series, d.baseline_seconds, d);
    return d;
  }
  d.baseline_seconds = rule.baseline_seconds();
  d.baseline_samples = rule.baseline_count();
  d.threshold_seconds = rule.threshold_seconds();
  const double baseline = *d.baseline_seconds;
  std::vector<double> base;  // the baseline window's values (for the cause attribution window)
  for (std::size_t k = d.warmup_skipped; k < measured.size() && base.size() < d.baseline_samples;
       ++k)
    base.push_back(*steps[measured[k]].seconds);

  struct Run {
    std::size_t first = 0, last = 0;
    std::vector<double> values;
    double median = 0;
  };
  std::vector<Run> runs;
  for (const RuleEvent& e : events) {
    if (e.kind == RuleEventKind::stall) {
      Stall st;
      st.first_index = e.first_index;
      st.start_step = e.first_step;
      st.end_step = e.last_step;
      st.time = e.first_time;
      st.measurements = e.slow_measurements;
      st.ratio = e.ratio;
      st.seconds = e.median_seconds;
      st.duration_seconds = std::round(e.excess_seconds * 1000.0) / 1000.0;
      d.stalls.push_back(st);
    } else if (e.kind == RuleEventKind::slowdown_end) {
      Run r;
      r.first = e.first_index;
      r.last = e.last_index;
      r.median = e.median_seconds;
      runs.push_back(std::move(r));
    }
  }

  std::optional<Window> base_window;
  if (!base.empty()) {
    const auto& first = steps[measured[d.warmup_skipped]];
    const auto& last =
        steps[measured[std::min(measured.size() - 1, d.warmup_skipped + base.size() - 1)]];
    if (first.time && last.time) base_window = Window{*first.time, *last.time};
  }
  bool warned_no_time = false;
  for (auto& r : runs) {
    Slowdown sd;
    sd.first_index = r.first;
    sd.last_index = r.last;
    sd.start_step = steps[r.first].step;
    sd.end_step = steps[r.last].step;
    sd.median_seconds = r.median;
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
