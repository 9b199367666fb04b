#pragma once
// ExporterState: what the HTTP handlers serve. The serve loop's thread calls update() once per
// interval with a fresh StatusReport; it renders /metrics, /api/status and /api/history once, and
// handlers only copy a shared_ptr to the rendered text, so a scrape never touches the machine.
// Thread-safe: update() from one thread, the getters from any number of handler threads.

#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "config/run_sections.hpp"
#include "exporter/event_tracker.hpp"
#include "exporter/history.hpp"
#include "exporter/metrics_builder.hpp"
#include "status/status_report.hpp"

namespace sparkops::exporter {

struct ExporterStateOptions {
  std::chrono::nanoseconds interval = config::ServeSettings{}.interval;
  std::chrono::nanoseconds history = std::chrono::hours{1};
  std::size_t max_workload_series = kDefaultMaxWorkloadSeries;
  sampling::DetectorConfig detector;
  DcgmCompat dcgm_compat = DcgmCompat::off;
};

// Points the ring keeps: history / interval, at least 2, at most 86400.
std::size_t history_capacity(std::chrono::nanoseconds history, std::chrono::nanoseconds interval);

class ExporterState {
 public:
  explicit ExporterState(ExporterStateOptions options);

  void update(const status::StatusReport& report, SteadyTime steady,
              std::optional<double> collect_seconds = std::nullopt);

  // Null until the first update(). Inline: the HTTP module (exporter/http_module.hpp) calls them
  // and links none of this library.
  std::shared_ptr<const std::string> metrics_text() const {
    const std::lock_guard lock(mutex_);
    return metrics_;
  }
  std::shared_ptr<const std::string> status_json() const {
    const std::lock_guard lock(mutex_);
    return status_;
  }
  std::shared_ptr<const std::string> history_json() const {
    const std::lock_guard lock(mutex_);
    return history_json_;
  }

 private:
  ExporterStateOptions options_;
  EventTracker events_;  // loop thread only
  HistoryRing history_;  // loop thread only
  mutable std::mutex mutex_;
  std::shared_ptr<const std::string> metrics_;
  std::shared_ptr<const std::string> status_;
  std::shared_ptr<const std::string> history_json_;
};

}  // namespace sparkops::exporter
