#pragma once
// Text rendering of `sparkops analyze`: a summary block, then one event line per slowdown start/end
// and pause, in log order. Pure; pinned by golden files.

#include <string>
#include <string_view>

#include "diagnose/diagnosis.hpp"
#include "diagnose/thermal_log.hpp"
#include "trainlog/step_series.hpp"

namespace sparkops::report {

std::string render_analysis_text(std::string_view log_name, const trainlog::StepSeries& series,
                                 const diagnose::Diagnosis& diagnosis,
                                 std::string_view thermal_name,
                                 const diagnose::ThermalLog* thermal);

}  // namespace sparkops::report
