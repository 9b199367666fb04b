#include "report/analysis_json.hpp"

#include <cmath>

#include "base/time_format.hpp"

namespace sparkops::report {

namespace {

using Json = nlohmann::ordered_json;

Json rounded(std::optional<double> v, double scale = 1e4) {
  if (!v || !std::isfinite(*v)) return nullptr;
  return std::round(*v * scale) / scale;
}

Json time_or_null(const std::optional<SystemTime>& t) {
  if (!t) return nullptr;
  return format_iso8601_utc_ms(*t);
}

}  // namespace

std::vector<std::string> analysis_notes(const trainlog::StepSeries& series,
                                        const diagnose::Diagnosis& diagnosis,
                                        const diagnose::ThermalLog* thermal) {
  std::vector<std::string> notes = trainlog::describe_notes(series.notes);
  if (series.times_approximate) {
    notes.push_back("wall times are approximate: anchored on the log file's modification time");
  }
  if (thermal) {
    for (auto& n : diagnose::describe_thermal_notes(*thermal)) notes.push_back(std::move(n));
  }
  for (const auto& n : diagnosis.notes) notes.push_back(n);
  return notes;
}

nlohmann::ordered_json analysis_to_json(std::string_view log_name,
                                        const trainlog::StepSeries& series,
                                        const diagnose::Diagnosis& d,
                                        const diagnose::ThermalLog* thermal) {
  Json j;
  j["log"] = std::string(log_name);
  j["format"] = std::string(trainlog::format_name(series.format));
  const trainlog::Headline h = trainlog::headline(series);
  j["steps"] = series.steps.size();
  j["first_step"] = h.first_step ? Json(*h.first_step) : Json(nullptr);
  j["last_step"] = h.last_step ? Json(*h.last_step) : Json(nullptr);
  j["total_steps"] = series.total_steps ? Json(*series.total_steps) : Json(nullptr);
  j["median_step_seconds"] = rounded(h.median_seconds);
  // How the step times were obtained: the unit as printed and, per source, how many records
  // (an "ema" source is a smoothed rate, not a measurement of each step).
  j["step_time_unit"] = series.unit.empty() ? Json(nullptr) : Json(series.unit);
  Json sources = Json::object();
  for (const auto& [src, count] : trainlog::time_sources(series))
    sources[std::string(trainlog::time_source_name(src))] = count;
  j["step_time_sources"] = sources;
  j["micro_steps_per_step"] = series.micro_steps_per_step;
  j["runs"] = h.run.run_count;
  j["run"] = h.run.run_count > 1 ? Json(h.run.index + 1) : Json(nullptr);
  j["baseline_step_seconds"] = rounded(d.baseline_seconds);
  j["warmup_skipped"] = d.warmup_skipped;
  j["train_runtime_seconds"] = rounded(series.train_runtime_seconds, 1e3);
  j["time_basis"] = std::string(trainlog::time_basis_name(series.time_basis));
  j["times_approximate"] = series.times_approximate;
  j["start_time"] = series.steps.empty() ? Json(nullptr) : time_or_null(series.steps.front().time);
  j["end_time"] = series.steps.empty() ? Json(nullptr) : time_or_null(series.steps.back().time);
  Json slowdowns = Json::array();
  for (const auto& s : d.slowdowns) {
    Json e;
    e["start"] = s.start_step;
    e["end"] = s.end_step;
    e["start_time"] = time_or_null(s.start_time);
    e["end_time"] = time_or_null(s.end_time);
    e["median_step_seconds"] = rounded(s.median_seconds);
    e["ratio"] = rounded(s.ratio, 1e3);
    e["doubled"] = s.doubled;
    e["cause"] = std::string(diagnose::cause_name(s.cause));
    e["confidence"] = rounded(s.confidence, 1e2);
    Json ev = Json::object();
    for (const auto& [k, v] : s.evidence) ev[k] = v;
    e["evidence"] = ev;
    e["explanation"] = s.explanation;
    slowdowns.push_back(e);
  }
  j["slowdowns"] = slowdowns;
  j["slow_step_threshold_seconds"] = rounded(d.threshold_seconds);
  Json stalls = Json::array();
  for (const auto& st : d.stalls) {
    Json e;
    e["start"] = st.start_step;
    e["end"] = st.end_step;
    e["time"] = time_or_null(st.time);
    e["measurements"] = st.measurements;
    e["step_seconds"] = rounded(st.seconds);
    e["ratio"] = rounded(st.ratio, 1e3);
    e["duration_seconds"] = rounded(st.duration_seconds, 1e3);
    stalls.push_back(e);
  }
  j["stalls"] = stalls;
  Json pauses = Json::array();
  for (const auto& p : d.pauses) {
    Json e;
    e["kind"] = std::string(trainlog::marker_kind_name(p.kind));
    e["kinds"] = p.kinds;
    e["position"] = std::string(diagnose::pause_position_name(p.position));
    e["step"] = p.step ? Json(*p.step) : Json(nullptr);
    e["time"] = time_or_null(p.time);
    e["duration_seconds"] = rounded(p.duration_seconds, 1e3);
    e["detail"] = p.detail;
    pauses.push_back(e);
  }
  j["pauses"] = pauses;
  j["mid_run_pauses"] = d.mid_run_pauses;
  if (thermal) {
    Json t;
    t["format"] = std::string(diagnose::thermal_format_name(thermal->format));
    t["samples"] = thermal->samples.size();
    t["first_time"] =
        thermal->samples.empty() ? Json(nullptr) : time_or_null(thermal->samples.front().time);
    t["last_time"] =
        thermal->samples.empty() ? Json(nullptr) : time_or_null(thermal->samples.back().time);
    j["thermal"] = t;
  } else {
    j["thermal"] = nullptr;
  }
  j["notes"] = analysis_notes(series, d, thermal);
  return j;
}

}  // namespace sparkops::report
