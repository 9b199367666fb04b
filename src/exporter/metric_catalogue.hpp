#pragma once
// The catalogue of every metric family sparkops exports: name, type, help and label names. The
// /metrics builder takes help and type from here, docs/metrics.md lists the same names, and a test
// checks the two against each other and against what a full StatusReport emits.

#include <string_view>
#include <vector>

#include "config/run_sections.hpp"
#include "exporter/prom_text.hpp"

namespace sparkops::exporter {

struct MetricDef {
  std::string_view name;
  MetricType type;
  std::string_view labels;  // comma-separated label names, "" for none
  std::string_view help;
};

const std::vector<MetricDef>& metric_catalogue();

// The definition of `name`; throws std::out_of_range for a name not in the catalogue (a bug).
const MetricDef& metric_def(std::string_view name);

// Per-workload series are capped to bound cardinality; the rest are counted in
// sparkops_workloads_unexported. The default is config serve.max_workloads'.
inline constexpr auto kDefaultMaxWorkloadSeries =
    static_cast<std::size_t>(config::kDefaultMaxWorkloadSeries);

}  // namespace sparkops::exporter
