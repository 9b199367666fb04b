#include "tui/top_tracker.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "exporter/event_tracker.hpp"
#include "tui/frame.hpp"

namespace sparkops::tui {

namespace {

template <typename T>
void push_bounded(std::vector<T>& series, T value, std::size_t capacity) {
  series.push_back(std::move(value));
  if (series.size() > capacity) series.erase(series.begin());
}

// Counter difference, absent when either side is absent or the counter went backwards (a driver
// reload resets it; a captured tree may be swapped).
std::optional<std::uint64_t> since(const std::optional<std::uint64_t>& now,
                                   const std::optional<std::uint64_t>& base) {
  if (!now || !base || *now < *base) return std::nullopt;
  return *now - *base;
}

bool is_heuristic_slowdown(sampling::ThrottleCause c) {
  return c == sampling::ThrottleCause::unflagged_low_clock ||
         c == sampling::ThrottleCause::unflagged_low_power;
}

EventSeverity throttle_severity(const sampling::ThrottleEvent& e) {
  if (e.edge == sampling::EpisodeEdge::end) return EventSeverity::info;
  return is_heuristic_slowdown(e.cause) ? EventSeverity::warning : EventSeverity::alert;
}

std::string throttle_text(const sampling::ThrottleEvent& e) {
  std::string text = fmt::format("{} {}", e.edge == sampling::EpisodeEdge::start ? "start" : "end",
                                 sampling::throttle_cause_name(e.cause));
  if (e.gpu_index) text += fmt::format(" gpu={}", *e.gpu_index);
  if (!e.evidence.empty()) text += " " + e.evidence;
  return text;
}

EventSeverity contention_severity(workloads::ContentionKind k) {
  switch (k) {
    case workloads::ContentionKind::oom_kill:
    case workloads::ContentionKind::evicted:
    case workloads::ContentionKind::psi_full:
      return EventSeverity::alert;
    default:
      return EventSeverity::warning;
  }
}

}  // namespace

TopTracker::TopTracker(TrackerOptions options)
    : options_(options),
      detector_(options.thresholds.detector),
      contention_(options.thresholds.pressure) {
  model_.thresholds = options.thresholds;
}

void TopTracker::push_event(SystemTime time, EventSeverity severity, std::string text) {
  model_.events.push_back(EventLine{time, severity, std::move(text)});
  while (model_.events.size() > options_.event_capacity) model_.events.pop_front();
}

void TopTracker::observe(status::StatusReport report, SteadyTime steady) {
  sampling::Sample sample = exporter::sample_from_report(report, model_.refreshes, steady);
  sampling::compute_deltas(previous_ ? &*previous_ : nullptr, sample);
  if (!first_steady_) first_steady_ = steady;

  track_gpus(sample, detector_.feed(sample));
  track_since_start(report, sample);
  for (const auto& e : contention_.feed(exporter::contention_reading_from_report(report, steady))) {
    std::string text = std::string(workloads::contention_kind_name(e.kind));
    if (e.pid) text += fmt::format(" pid={}", *e.pid);
    if (!e.evidence.empty()) text += ": " + e.evidence;
    push_event(report.taken_at, contention_severity(e.kind), printable(text));
  }
  track_workloads(report);

  if (report.pool) {
    push_bounded(model_.pool_available_bytes,
                 std::optional<double>(static_cast<double>(report.pool->available_bytes)),
                 options_.history_points);
    push_bounded(model_.pool_free_bytes,
                 std::optional<double>(static_cast<double>(report.pool->free_now_bytes)),
                 options_.history_points);
  } else {
    push_bounded(model_.pool_available_bytes, std::optional<double>(), options_.history_points);
    push_bounded(model_.pool_free_bytes, std::optional<double>(), options_.history_points);
  }

  model_.report = std::move(report);
  ++model_.refreshes;
  previous_ = std::move(sample);
}

void TopTracker::track_gpus(const sampling::Sample& sample,
                            const std::vector<sampling::ThrottleEvent>& events) {
  for (const auto& e : events) {
    push_event(e.time, throttle_severity(e), printable(throttle_text(e)));
  }
  // One GpuActivity per device the report shows, keeping each one's history by index.
  std::vector<GpuActivity> next;
  for (const auto& reading : sample.gpus) {
    const unsigned index = reading.snapshot.index;
    GpuActivity activity;
    for (auto& old : model_.gpus) {
      if (old.index == index) activity = std::move(old);
    }
    activity.index = index;
    activity.counter_deltas = reading.deltas.throttle;
    activity.interval = sample.interval;
    for (const auto& e : events) {
      if (!e.gpu_index || *e.gpu_index != index) continue;
      auto& open = activity.open_causes;
      const auto it = std::find(open.begin(), open.end(), e.cause);
      if (e.edge == sampling::EpisodeEdge::start && it == open.end()) open.push_back(e.cause);
      if (e.edge == sampling::EpisodeEdge::end && it != open.end()) open.erase(it);
    }
    const auto& snap = reading.snapshot;
    push_bounded(activity.temperature_celsius,
                 snap.temp_millicelsius
                     ? std::optional<double>(static_cast<double>(*snap.temp_millicelsius) / 1000.0)
                     : std::nullopt,
                 options_.history_points);
    push_bounded(activity.power_watts,
                 snap.power_microwatts
                     ? std::optional<double>(static_cast<double>(*snap.power_microwatts) / 1e6)
                     : std::nullopt,
                 options_.history_points);
    next.push_back(std::move(activity));
  }
  model_.gpus = std::move(next);
}

void TopTracker::track_since_start(const status::StatusReport& report,
                                   const sampling::Sample& sample) {
  SinceStart& s = model_.since_start;
  if (first_steady_) s.elapsed = sample.steady_time - *first_steady_;
  if (!report.vmstat) return;
  const host::Vmstat& v = *report.vmstat;
  if (!baseline_) baseline_ = v;
  s.refaults = since(v.workingset_refault_total(), baseline_->workingset_refault_total());
  s.major_faults = since(v.pgmajfault, baseline_->pgmajfault);
  s.oom_kills = since(v.oom_kill, baseline_->oom_kill);
  const auto refaults_now = v.workingset_refault_total();
  s.refaults_per_second.reset();
  const double seconds = std::chrono::duration<double>(sample.interval).count();
  if (const auto d = since(refaults_now, previous_refaults_); d && seconds > 0) {
    s.refaults_per_second = static_cast<double>(*d) / seconds;
  }
  previous_refaults_ = refaults_now;
}

void TopTracker::track_workloads(const status::StatusReport& report) {
  if (!report.workloads) return;
  std::set<std::uint32_t> now;
  std::size_t heavy = 0;
  for (const auto& w : *report.workloads) {
    now.insert(w.pid);
    heavy += w.heavy ? 1 : 0;
    if (workloads_seen_ && workload_pids_.count(w.pid) == 0) {
      push_event(report.taken_at, EventSeverity::info,
                 printable(fmt::format("new workload pid={} {} {}", w.pid, w.kind, w.name)));
    }
  }
  if (workloads_seen_) {
    for (const auto pid : workload_pids_) {
      if (now.count(pid) == 0) {
        push_event(report.taken_at, EventSeverity::info, fmt::format("workload pid={} gone", pid));
      }
    }
  }
  // The one-heavy-job rule starting or ending to be broken (the exporter counts the same edge).
  const bool contended = heavy >= 2;
  if (contended != contended_) {
    push_event(report.taken_at, contended ? EventSeverity::alert : EventSeverity::info,
               contended ? fmt::format("{} heavy workloads at once: one heavy job at a time", heavy)
                         : std::string("one heavy job at a time: holds again"));
  }
  contended_ = contended;
  workload_pids_ = std::move(now);
  workloads_seen_ = true;
}

}  // namespace sparkops::tui
