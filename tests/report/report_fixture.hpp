#pragma once
// The synthetic run shared by the report tests: thermal throttle at steps 100-139, memory
// contention at 300-339, an evaluation after step 200 and a checkpoint after 250, samples in the
// extended CSV.

#include <string>

#include "diagnose/diagnosis.hpp"
#include "diagnose/synthetic_trace.hpp"
#include "trainlog/parse_log.hpp"

namespace sparkops::test {

struct AnalysedRun {
  Trace trace;
  trainlog::StepSeries series;
  diagnose::ThermalLog thermal;
  diagnose::Diagnosis diagnosis;
};

inline TraceSpec report_spec() {
  TraceSpec spec;
  spec.episodes = {{EpisodeKind::thermal, 100, 139, 3.0}, {EpisodeKind::contention, 300, 339, 4.5}};
  spec.evals = {{200, 60.0}};
  spec.checkpoints = {{250, 30.0}};
  return spec;
}

inline AnalysedRun analysed_run() {
  AnalysedRun r;
  r.trace = make_trace(report_spec());
  trainlog::ParseOptions po;
  po.start = TraceSpec{}.start;
  r.series = *trainlog::parse_log_text(r.trace.log, po, std::nullopt, "train.log");
  r.thermal = *diagnose::parse_thermal_log(r.trace.extended_csv, diagnose::ThermalReadOptions{});
  r.diagnosis = diagnose::diagnose(r.series, &r.thermal, diagnose::DiagnoseOptions{});
  return r;
}

}  // namespace sparkops::test
