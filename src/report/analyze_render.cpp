#include "report/analyze_render.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "base/time_format.hpp"
#include "report/analysis_json.hpp"

namespace sparkops::report {

namespace {

std::string when(const std::optional<SystemTime>& t) {
  return t ? format_iso8601_utc_ms(*t) : std::string("-");
}

std::string seconds_text(std::optional<double> s) {
  if (!s) return "n/a";
  if (*s >= 100) return fmt::format("{:.1f}", *s);
  if (*s >= 1) return fmt::format("{:.2f}", *s);
  return fmt::format("{:.4f}", *s);
}

// Words for people; the JSON document keeps the tokens (time_basis_name and friends).
std::string_view time_basis_words(trainlog::TimeBasis b) {
  switch (b) {
    case trainlog::TimeBasis::none:
      return "none (no wall time in the log)";
    case trainlog::TimeBasis::log_timestamps:
      return "the log's own timestamps";
    case trainlog::TimeBasis::sidecar:
      return "the sparkops watch sidecar";
    case trainlog::TimeBasis::start_flag:
      return "elapsed times anchored by --start";
    case trainlog::TimeBasis::file_mtime:
      return "elapsed times anchored by the file's modification time";
  }
  return "none (no wall time in the log)";
}

std::string_view time_source_words(trainlog::TimeSource s) {
  switch (s) {
    case trainlog::TimeSource::none:
      return "none";
    case trainlog::TimeSource::printed:
      return "printed";
    case trainlog::TimeSource::ema:
      return "smoothed rate";
    case trainlog::TimeSource::running_mean:
      return "running mean";
    case trainlog::TimeSource::elapsed_delta:
      return "elapsed-clock delta";
    case trainlog::TimeSource::wall_delta:
      return "wall-clock delta";
    case trainlog::TimeSource::samples_rate:
      return "samples/s rate";
  }
  return "none";
}

std::string_view thermal_format_words(diagnose::ThermalFormat f) {
  switch (f) {
    case diagnose::ThermalFormat::nvidia_smi:
      return "nvidia-smi CSV";
    case diagnose::ThermalFormat::extended_csv:
      return "sparkops extended CSV";
    case diagnose::ThermalFormat::jsonl:
      return "JSONL";
  }
  return "nvidia-smi CSV";
}

struct Event {
  std::size_t order;  // record index, for log order
  int rank;           // tie-break: pauses and starts before ends
  std::string text;
};

}  // namespace

std::string render_analysis_text(std::string_view log_name, const trainlog::StepSeries& series,
                                 const diagnose::Diagnosis& d, std::string_view thermal_name,
                                 const diagnose::ThermalLog* thermal) {
  std::string out;
  const auto& steps = series.steps;
  out += fmt::format("Log        {} ({})\n", log_name, trainlog::format_name(series.format));
  const trainlog::Headline h = trainlog::headline(series);
  if (steps.empty() || !h.first_step) {
    out += fmt::format("Steps      {}\n", steps.size());
  } else {
    out += fmt::format(
        "Steps      {} record(s) (step {} to {}{}{})\n", steps.size(), *h.first_step, *h.last_step,
        series.total_steps ? fmt::format(" of {}", *series.total_steps) : "",
        h.run.run_count > 1
            ? fmt::format("; run {} of {} in this log", h.run.index + 1, h.run.run_count)
            : "");
  }
  if (series.micro_steps_per_step > 1) {
    out += fmt::format("Micro      records are micro-batches: {} make one optimizer step\n",
                       series.micro_steps_per_step);
  }
  {
    std::string src;
    for (const auto& [s, count] : trainlog::time_sources(series))
      src += fmt::format("{}{} {}", src.empty() ? "" : ", ", count, time_source_words(s));
    if (!src.empty()) {
      out += fmt::format("Step time  {}{}{}\n", series.unit.empty() ? "" : series.unit,
                         series.unit.empty() ? "" : " as printed; ", src);
    }
  }
  out += fmt::format(
      "Baseline   {} s/step (median after {} warm-up measurement(s)); overall median {} s/step\n",
      seconds_text(d.baseline_seconds), d.warmup_skipped, seconds_text(h.median_seconds));
  out += fmt::format("Times      {}{}\n", time_basis_words(series.time_basis),
                     series.times_approximate ? " (approximate)" : "");
  if (thermal) {
    out += fmt::format("Thermal    {} ({}, {} samples)\n", thermal_name,
                       thermal_format_words(thermal->format), thermal->samples.size());
  } else {
    out += "Thermal    none (--thermal FILE correlates slowdowns with temperature and power)\n";
  }
  out += fmt::format("Slowdowns  {}\n", d.slowdowns.size());
  for (const auto& s : d.slowdowns) {
    out += fmt::format("  steps {}-{}  {} to {}  {:.2f}x{}  {} (confidence {:.2f}): {}\n",
                       s.start_step, s.end_step, when(s.start_time), when(s.end_time), s.ratio,
                       s.doubled ? " doubled" : "", diagnose::cause_name(s.cause), s.confidence,
                       s.explanation);
    if (!s.evidence.empty()) {
      std::string ev;
      for (const auto& [k, v] : s.evidence) ev += fmt::format(" {}={}", k, v);
      out += fmt::format("    evidence:{}\n", ev);
    }
  }
  out += fmt::format("Stalls     {}\n", d.stalls.size());
  for (const auto& st : d.stalls) {
    out += fmt::format("  step {}{}  {}  {:.2f}x for {} measurement(s), {:.1f} s lost\n",
                       st.start_step,
                       st.end_step != st.start_step ? fmt::format("-{}", st.end_step) : "",
                       when(st.time), st.ratio, st.measurements, st.duration_seconds);
  }
  out += fmt::format("Pauses     {} ({} mid-run)\n", d.pauses.size(), d.mid_run_pauses);
  for (const auto& n : report::analysis_notes(series, d, thermal))
    out += fmt::format("Note       {}\n", n);

  std::vector<Event> events;
  for (const auto& s : d.slowdowns) {
    events.push_back({s.first_index, 1,
                      fmt::format("event {} slowdown_start step={} ratio={:.2f}{} cause={}",
                                  when(s.start_time), s.start_step, s.ratio,
                                  s.doubled ? " doubled" : "", diagnose::cause_name(s.cause))});
    events.push_back({s.last_index, 2,
                      fmt::format("event {} slowdown_end step={}", when(s.end_time), s.end_step)});
  }
  for (const auto& st : d.stalls) {
    events.push_back({st.first_index, 1,
                      fmt::format("event {} stall step={} duration={:.1f}s ratio={:.2f}",
                                  when(st.time), st.start_step, st.duration_seconds, st.ratio)});
  }
  std::size_t cursor = 0;
  for (const auto& p : d.pauses) {
    if (p.step) {
      std::size_t i = cursor;
      while (i < steps.size() && steps[i].step != *p.step) ++i;
      if (i < steps.size()) cursor = i;
    }
    events.push_back(
        {cursor, 0,
         fmt::format(
             "event {} {} step={}{}", when(p.time), trainlog::marker_kind_name(p.kind),
             p.step ? std::to_string(*p.step) : "-",
             p.duration_seconds ? fmt::format(" duration={:.1f}s", *p.duration_seconds) : "")});
  }
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return a.order != b.order ? a.order < b.order : a.rank < b.rank;
  });
  for (const auto& e : events) out += e.text + "\n";
  return out;
}

}  // namespace sparkops::report
