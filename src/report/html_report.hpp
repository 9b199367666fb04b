#pragma once
// The `sparkops analyze --html` report: one self-contained HTML file (uPlot and the page script
// inlined, the data inline as JSON, no network). Charts on one time axis: step time, GPU
// temperature, power, SM clock and available memory, with slowdowns and pauses shaded.

#include <string>
#include <string_view>

#include "diagnose/diagnosis.hpp"
#include "diagnose/thermal_log.hpp"
#include "trainlog/step_series.hpp"

namespace sparkops::report {

std::string render_html_report(std::string_view log_name, const trainlog::StepSeries& series,
                               const diagnose::Diagnosis& diagnosis,
                               const diagnose::ThermalLog* thermal);

}  // namespace sparkops::report
