#include "exporter/history.hpp"

#include <chrono>
#include <nlohmann/json.hpp>

#include "base/json_text.hpp"

namespace sparkops::exporter {

HistoryPoint history_point(const status::StatusReport& report) {
  HistoryPoint p;
  p.time_seconds = std::chrono::duration<double>(report.taken_at.time_since_epoch()).count();
  if (!report.gpu.snapshots.empty()) {
    const auto& s = report.gpu.snapshots.front();
    if (s.temp_millicelsius)
      p.gpu_temperature_celsius = static_cast<double>(*s.temp_millicelsius) / 1e3;
    if (s.power_microwatts) p.gpu_power_watts = static_cast<double>(*s.power_microwatts) / 1e6;
    if (s.sm_clock_mhz) p.gpu_sm_clock_hertz = static_cast<double>(*s.sm_clock_mhz) * 1e6;
    if (s.util_gpu_percent)
      p.gpu_utilization_ratio = static_cast<double>(*s.util_gpu_percent) / 1e2;
  }
  if (report.pool) {
    p.pool_available_bytes = static_cast<double>(report.pool->available_bytes);
    p.pool_free_bytes = static_cast<double>(report.pool->free_now_bytes);
    p.pool_budget_bytes = static_cast<double>(report.pool->budget_bytes);
  }
  if (report.workloads) {
    double sum = 0;
    bool any = false;
    for (const auto& w : *report.workloads) {
      if (w.actual_bytes) {
        sum += static_cast<double>(*w.actual_bytes);
        any = true;
      }
    }
    if (any || report.workloads->empty()) p.workloads_actual_bytes = sum;
  }
  if (report.memory_pressure)
    p.memory_pressure_some_avg10_ratio = report.memory_pressure->some.avg10 / 1e2;
  if (report.hottest_sensor) {
    p.host_hottest_celsius = static_cast<double>(report.hottest_sensor->temp_millicelsius) / 1e3;
  }
  return p;
}

HistoryRing::HistoryRing(std::size_t capacity) : points_(capacity == 0 ? 1 : capacity) {}

void HistoryRing::push(const HistoryPoint& point) {
  points_[next_] = point;
  next_ = (next_ + 1) % points_.size();
  if (size_ < points_.size()) ++size_;
}

std::vector<HistoryPoint> HistoryRing::points() const {
  std::vector<HistoryPoint> out;
  out.reserve(size_);
  const std::size_t start = (next_ + points_.size() - size_) % points_.size();
  for (std::size_t i = 0; i < size_; ++i) out.push_back(points_[(start + i) % points_.size()]);
  return out;
}

std::string history_to_json(const std::vector<HistoryPoint>& points, double interval_seconds,
                            std::size_t capacity, const std::vector<RecentEvent>& events) {
  using Member = std::optional<double> HistoryPoint::*;
  static const std::pair<const char*, Member> kSeries[] = {
      {"gpu_temperature_celsius", &HistoryPoint::gpu_temperature_celsius},
      {"gpu_power_watts", &HistoryPoint::gpu_power_watts},
      {"gpu_sm_clock_hertz", &HistoryPoint::gpu_sm_clock_hertz},
      {"gpu_utilization_ratio", &HistoryPoint::gpu_utilization_ratio},
      {"pool_available_bytes", &HistoryPoint::pool_available_bytes},
      {"pool_free_bytes", &HistoryPoint::pool_free_bytes},
      {"pool_budget_bytes", &HistoryPoint::pool_budget_bytes},
      {"workloads_actual_bytes", &HistoryPoint::workloads_actual_bytes},
      {"memory_pressure_some_avg10_ratio", &HistoryPoint::memory_pressure_some_avg10_ratio},
      {"host_hottest_celsius", &HistoryPoint::host_hottest_celsius},
  };
  nlohmann::ordered_json doc;
  doc["interval_seconds"] = interval_seconds;
  doc["capacity"] = capacity;
  auto time = nlohmann::ordered_json::array();
  for (const auto& p : points) time.push_back(p.time_seconds);
  doc["time"] = std::move(time);
  auto series = nlohmann::ordered_json::object();
  for (const auto& [name, member] : kSeries) {
    auto column = nlohmann::ordered_json::array();
    for (const auto& p : points) {
      const auto& v = p.*member;
      if (v)
        column.push_back(*v);
      else
        column.push_back(nullptr);
    }
    series[name] = std::move(column);
  }
  doc["series"] = std::move(series);
  auto recent = nlohmann::ordered_json::array();
  for (const auto& e : events) {
    recent.push_back({{"time", e.time_seconds}, {"kind", e.kind}, {"detail", e.detail}});
  }
  doc["events"] = std::move(recent);
  return dump_json(doc);
}

}  // namespace sparkops::exporter
