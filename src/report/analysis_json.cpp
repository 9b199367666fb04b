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
  j["steps"] = series.steps.size();
  j["first_step"] = series.steps.empty() ? Json(nullptr) : Json(series.steps.front().step);
  j["last_step"] = series.steps.empty() ? Json(nullptr) : Json(series.steps.back().step);
  j["total_steps"] = series.total_steps ? Json(*series.total_steps) : Json(nullptr);
  j["median_step_seconds"] = rounded(trainlog::median_seconds(series));
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
  Json pauses = Json::array();
  for (const auto& p : d.pauses) {
    Json e;
    e["kind"] = std::string(trainlog::marker_kind_name(p.kind));
    e["step"] = p.step ? Json(*p.step) : Json(nullptr);
    e["time"] = time_or_null(p.time);
    e["duration_seconds"] = rounded(p.duration_seconds, 1e3);
    e["detail"] = p.detail;
    pauses.push_back(e);
  }
  j["pauses"] = pauses;
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
