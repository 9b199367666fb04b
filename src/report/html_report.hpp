#pragma once
// The `sparkops analyze --html` report: one self-contained HTML file (uPlot and the page script
// inlined, the data inline as JSON, no network). Charts share one x range and one cursor: step
// time, training loss, GPU temperature, power, SM clock and available memory, with slowdowns and
// throttle episodes as bands and pauses/stalls as marks; times are labelled in UTC (or UTC plus the
// offset the user chose); a key explains every colour and a table lists each event with its
// evidence.

#include <chrono>
#include <string>
#include <string_view>

#include "diagnose/diagnosis.hpp"
#include "diagnose/thermal_log.hpp"
#include "trainlog/step_series.hpp"

namespace sparkops::report {

struct ReportOptions {
  // Added to UTC for every time label (base/time_format.hpp parse_utc_offset); 0 labels in UTC.
  std::chrono::seconds utc_offset{0};
};

std::string render_html_report(std::string_view log_name, const trainlog::StepSeries& series,
                               const diagnose::Diagnosis& diagnosis,
                               const diagnose::ThermalLog* thermal,
                               const ReportOptions& options = {});

}  // namespace sparkops::report
