#pragma once
// The `sparkops analyze --json` document: a pure function of the parsed log, the diagnosis and the
// samples, pinned by golden files. Keys: format, steps, first_step, last_step, median_step_seconds,
// baseline_step_seconds, time_basis, slowdowns[] (start, end, start_time, end_time, ratio, doubled,
// cause, confidence, evidence{}, explanation), pauses[] (kind, step, time, duration_seconds,
// detail), thermal, notes[].

#include <string_view>

#include <nlohmann/json.hpp>

#include "diagnose/diagnosis.hpp"
#include "diagnose/thermal_log.hpp"
#include "trainlog/step_series.hpp"

namespace sparkops::report {

nlohmann::ordered_json analysis_to_json(std::string_view log_name,
                                        const trainlog::StepSeries& series,
                                        const diagnose::Diagnosis& diagnosis,
                                        const diagnose::ThermalLog* thermal);

// Notes from parsing, the samples and the diagnosis, in that order.
std::vector<std::string> analysis_notes(const trainlog::StepSeries& series,
                                        const diagnose::Diagnosis& diagnosis,
                                        const diagnose::ThermalLog* thermal);

}  // namespace sparkops::report
