#pragma once
// StatusReport (+ the exporter's own event totals) -> Prometheus metric families. Pure: the same
// inputs give the same text. Units are converted to Prometheus base units here (bytes, celsius,
// watts, joules, hertz, seconds, ratios 0-1). A figure the machine did not provide is omitted,
// never exported as 0.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "exporter/dcgm_compat.hpp"
#include "exporter/metric_catalogue.hpp"
#include "exporter/prom_text.hpp"
#include "status/status_report.hpp"

namespace sparkops::exporter {

struct EventCount {
  unsigned gpu = 0;
  std::string reason;
  std::uint64_t count = 0;
};

// Event counters kept by the serve loop across consecutive reports. A family whose detector did not
// run (no GPU, no workload scan) is absent rather than 0.
struct EventTotals {
  std::optional<std::vector<EventCount>> throttle;
  std::optional<std::vector<EventCount>> slowdown;
  std::optional<std::uint64_t> contention;
  std::uint64_t gpu_hangs = 0;  // gpu_hung episodes started (a driver call out past its timeout)
};

struct MetricsOptions {
  std::size_t max_workload_series = kDefaultMaxWorkloadSeries;
  std::optional<double> collect_duration_seconds;
  std::optional<double> collect_interval_seconds;  // absent for a one-off rendering
  // thermal.ceiling_watts as the serve loop's detector uses it; absent for a one-off rendering.
  std::optional<double> platform_ceiling_watts;
  DcgmCompat dcgm_compat = DcgmCompat::off;  // on: DCGM-named families follow sparkops'
};

std::vector<MetricFamily> build_metric_families(const status::StatusReport& report,
                                                const EventTotals& events,
                                                const MetricsOptions& options);

// render_exposition(build_metric_families(...)).
std::string render_metrics(const status::StatusReport& report, const EventTotals& events,
                           const MetricsOptions& options);

}  // namespace sparkops::exporter
