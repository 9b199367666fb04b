#pragma once
// The dashboard's memory: one point per serve interval, the last hour by default, in a fixed-size
// ring (oldest dropped). Not thread-safe; ExporterState guards it.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "status/status_report.hpp"

namespace sparkops::exporter {

// Base units, as in /metrics. GPU figures are the first device's.
struct HistoryPoint {
  double time_seconds = 0;  // Unix time
  std::optional<double> gpu_temperature_celsius;
  std::optional<double> gpu_power_watts;
  std::optional<double> gpu_sm_clock_hertz;
  std::optional<double> gpu_utilization_ratio;
  std::optional<double> pool_available_bytes;
  std::optional<double> pool_free_bytes;
  std::optional<double> pool_budget_bytes;
  std::optional<double> workloads_actual_bytes;  // sum over every workload that reports it
  std::optional<double> memory_pressure_some_avg10_ratio;
  std::optional<double> host_hottest_celsius;
};

HistoryPoint history_point(const status::StatusReport& report);

class HistoryRing {
 public:
  explicit HistoryRing(std::size_t capacity);
  void push(const HistoryPoint& point);
  std::size_t size() const { return size_; }
  std::size_t capacity() const { return points_.size(); }
  // Oldest first.
  std::vector<HistoryPoint> points() const;

 private:
  std::vector<HistoryPoint> points_;
  std::size_t next_ = 0;
  std::size_t size_ = 0;
};

// One line of the dashboard's recent-events list: an episode edge of the throttle detector, a
// contention event or the one-heavy-job rule starting to be broken.
struct RecentEvent {
  double time_seconds = 0;  // UTC epoch seconds
  std::string kind;         // "throttle", "gpu", "contention", "heavy_jobs"
  std::string detail;       // one line for people, e.g. "start sw_thermal gpu=0 counter_delta_s=3"
};

// Columnar JSON for uPlot: {"interval_seconds":5,"capacity":720,"time":[...],
// "series":{"gpu_temperature_celsius":[83,null,...],...},"events":[{"time":...,"kind":...,
// "detail":...}]}; absent values are null; events oldest first.
std::string history_to_json(const std::vector<HistoryPoint>& points, double interval_seconds,
                            std::size_t capacity, const std::vector<RecentEvent>& events = {});

}  // namespace sparkops::exporter
