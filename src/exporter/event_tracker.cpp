#include "exporter/event_tracker.hpp"

#include <fmt/format.h>

namespace sparkops::exporter {

namespace {

constexpr sampling::ThrottleCause kThrottleCauses[] = {
    sampling::ThrottleCause::sw_power_cap,   sampling::ThrottleCause::hw_slowdown,
    sampling::ThrottleCause::sw_thermal,     sampling::ThrottleCause::hw_thermal,
    sampling::ThrottleCause::hw_power_brake, sampling::ThrottleCause::platform_cap};
constexpr sampling::ThrottleCause kSlowdownCauses[] = {
    sampling::ThrottleCause::unflagged_low_clock, sampling::ThrottleCause::unflagged_low_power};

bool is_counted(sampling::ThrottleCause cause) {
  for (const auto c : kThrottleCauses) {
    if (c == cause) return true;
  }
  for (const auto c : kSlowdownCauses) {
    if (c == cause) return true;
  }
  return false;
}

}  // namespace

sampling::Sample sample_from_report(const status::StatusReport& report, std::uint64_t tick,
                                    SteadyTime steady) {
  sampling::Sample s;
  s.tick = tick;
  s.wall_time = report.taken_at;
  s.steady_time = steady;
  if (report.hottest_sensor) {
    s.host.hottest_sensor = report.hottest_sensor->name;
    s.host.hottest_millicelsius = report.hottest_sensor->temp_millicelsius;
  }
  for (const auto& rail : report.spbm_rails) {
    if (rail.name == "sys_total")
      s.host.spbm_sys_total_microwatts = rail.power_microwatts;
    else if (rail.name == "soc_pkg")
      s.host.spbm_soc_pkg_microwatts = rail.power_microwatts;
    else if (rail.name == "cpu_gpu")
      s.host.spbm_cpu_gpu_microwatts = rail.power_microwatts;
    else if (rail.name == "gpu")
      s.host.spbm_gpu_microwatts = rail.power_microwatts;
    else if (rail.name == "dc_input")
      s.host.spbm_dc_input_microwatts = rail.power_microwatts;
  }
  if (report.pool) {
    s.host.mem_total_bytes = report.pool->total_bytes;
    s.host.mem_free_bytes = report.pool->free_now_bytes;
    s.host.mem_available_bytes = report.pool->available_bytes;
  }
  if (report.memory_pressure) {
    s.host.psi_mem_some_total_us = report.memory_pressure->some.total_us;
    if (report.memory_pressure->full)
      s.host.psi_mem_full_total_us = report.memory_pressure->full->total_us;
  }
  s.gpu_state = report.gpu.state;
  s.gpu_detail = report.gpu.detail;
  s.devices = report.gpu.devices;
  if (report.gpu.state == gpu::GpuState::ok) {
    for (const auto& snap : report.gpu.snapshots) s.gpus.push_back(sampling::GpuReading{snap, {}});
  }
  return s;
}

EventTracker::EventTracker(sampling::DetectorConfig config) : detector_(config) {}

void EventTracker::remember(SystemTime at, std::string kind, std::string detail) {
  recent_.push_back(RecentEvent{std::chrono::duration<double>(at.time_since_epoch()).count(),
                                std::move(kind), std::move(detail)});
  while (recent_.size() > kRecentEvents) recent_.pop_front();
}

workloads::ContentionReading contention_reading_from_report(const status::StatusReport& report,
                                                            SteadyTime steady) {
  workloads::ContentionReading r;
  r.at = steady;
  if (report.memory_pressure) {
    r.psi_some_avg10 = report.memory_pressure->some.avg10;
    if (report.memory_pressure->full) r.psi_full_avg10 = report.memory_pressure->full->avg10;
  }
  if (report.vmstat) {
    r.pgmajfault = report.vmstat->pgmajfault;
    r.workingset_refault = report.vmstat->workingset_refault_total();
    r.pswpin = report.vmstat->pswpin;
    r.oom_kill = report.vmstat->oom_kill;
  }
  if (report.workloads) {
    for (const auto& w : *report.workloads) {
      if (w.actual_bytes) r.workloads.push_back({w.pid, w.kind, *w.actual_bytes});
    }
  }
  return r;
}

void EventTracker::observe(const status::StatusReport& report, SteadyTime steady) {
  sampling::Sample sample = sample_from_report(report, tick_++, steady);
  sampling::compute_deltas(previous_ ? &*previous_ : nullptr, sample);
  for (const auto& gpu : sample.gpus) {
    gpu_seen_ = true;
    for (const auto c : kThrottleCauses) counts_.try_emplace({gpu.snapshot.index, c}, 0);
    for (const auto c : kSlowdownCauses) counts_.try_emplace({gpu.snapshot.index, c}, 0);
  }
  for (const auto& event : detector_.feed(sample)) {
    remember(event.time, is_counted(event.cause) ? "throttle" : "gpu",
             fmt::format("{} {}{} {}", event.edge == sampling::EpisodeEdge::start ? "start" : "end",
                         sampling::throttle_cause_name(event.cause),
                         event.gpu_index ? fmt::format(" gpu={}", *event.gpu_index) : "",
                         event.evidence));
    if (event.edge == sampling::EpisodeEdge::start &&
        event.cause == sampling::ThrottleCause::gpu_hung)
      ++gpu_hangs_;
    if (event.edge != sampling::EpisodeEdge::start || !event.gpu_index || !is_counted(event.cause))
      continue;
    ++counts_[{*event.gpu_index, event.cause}];
  }
  previous_ = std::move(sample);

  const auto contention_events =
      contention_tracker_.feed(contention_reading_from_report(report, steady));
  for (const auto& e : contention_events) {
    remember(report.taken_at, "contention",
             fmt::format("{}{}: {}", workloads::contention_kind_name(e.kind),
                         e.pid ? fmt::format(" pid={}", *e.pid) : "", e.evidence));
  }
  contention_ += contention_events.size();
  if (report.workloads) {
    scan_seen_ = true;
    std::size_t heavy = 0;
    for (const auto& w : *report.workloads) heavy += w.heavy ? 1 : 0;
    const bool contended = heavy >= 2;
    if (contended && !contended_) {
      ++contention_;
      remember(
          report.taken_at, "heavy_jobs",
          fmt::format("{} heavy workloads on the pool: the one-heavy-job rule is broken", heavy));
    }
    contended_ = contended;
  }
}

EventTotals EventTracker::totals() const {
  EventTotals t;
  if (gpu_seen_) {
    t.throttle.emplace();
    t.slowdown.emplace();
    for (const auto& [key, n] : counts_) {
      const auto& [gpu, cause] = key;
      bool slow = false;
      for (const auto c : kSlowdownCauses) slow = slow || c == cause;
      (slow ? *t.slowdown : *t.throttle)
          .push_back(EventCount{gpu, std::string(sampling::throttle_cause_name(cause)), n});
    }
  }
  if (scan_seen_) t.contention = contention_;
  t.gpu_hangs = gpu_hangs_;
  return t;
}

}  // namespace sparkops::exporter
