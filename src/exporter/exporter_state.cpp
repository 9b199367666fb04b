#include "exporter/exporter_state.hpp"

#include <algorithm>

#include "base/json_text.hpp"
#include "status/status_json.hpp"

namespace sparkops::exporter {

std::size_t history_capacity(std::chrono::nanoseconds history, std::chrono::nanoseconds interval) {
  const auto step = std::max<std::int64_t>(interval.count(), 1);
  const auto n = history.count() / step;
  return static_cast<std::size_t>(std::clamp<std::int64_t>(n, 2, 86400));
}

ExporterState::ExporterState(ExporterStateOptions options)
    : options_(options),
      events_(options.detector),
      history_(history_capacity(options.history, options.interval)) {}

void ExporterState::update(const status::StatusReport& report, SteadyTime steady,
                           std::optional<double> collect_seconds) {
  events_.observe(report, steady);
  history_.push(history_point(report));
  MetricsOptions mo;
  mo.max_workload_series = options_.max_workload_series;
  mo.collect_duration_seconds = collect_seconds;
  mo.dcgm_compat = options_.dcgm_compat;
  mo.platform_ceiling_watts = options_.detector.ceiling_watts;
  mo.collect_interval_seconds = std::chrono::duration<double>(options_.interval).count();
  auto metrics = std::make_shared<const std::string>(render_metrics(report, events_.totals(), mo));
  auto status =
      std::make_shared<const std::string>(dump_document(status::status_to_json(report)) + "\n");
  auto history = std::make_shared<const std::string>(
      history_to_json(history_.points(), std::chrono::duration<double>(options_.interval).count(),
                      history_.capacity(), events_.recent()));
  const std::lock_guard lock(mutex_);
  metrics_ = std::move(metrics);
  status_ = std::move(status);
  history_json_ = std::move(history);
}

}  // namespace sparkops::exporter
