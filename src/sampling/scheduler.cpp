#include "sampling/scheduler.hpp"

namespace sparkops::sampling {

TickSchedule::TickSchedule(SteadyTime t0, std::chrono::nanoseconds interval)
    : t0_(t0), interval_(interval) {}

SteadyTime TickSchedule::due(std::uint64_t tick) const {
  return t0_ + interval_ * static_cast<std::int64_t>(tick);
}

TickSchedule::Next TickSchedule::next_after(std::uint64_t done, SteadyTime now) const {
  Next next{done + 1, 0};
  if (interval_.count() <= 0 || now - due(next.tick) <= interval_) return next;
  const auto latest = static_cast<std::uint64_t>((now - t0_) / interval_);
  next.skipped = latest - next.tick;
  next.tick = latest;
  return next;
}

LoopEnd run_schedule(Clock& clock, std::chrono::nanoseconds interval, const ScheduleLimits& limits,
                     std::stop_token stop, const std::function<void(const Tick&)>& on_tick) {
  const TickSchedule schedule(clock.steady_now(), interval);
  std::uint64_t ran = 0;
  TickSchedule::Next next{0, 0};
  for (;;) {
    if (limits.count && ran >= *limits.count) return LoopEnd::count_reached;
    const SteadyTime due = schedule.due(next.tick);
    if (limits.duration && due - schedule.due(0) >= *limits.duration)
      return LoopEnd::duration_reached;
    while (clock.steady_now() < due) {
      if (!clock.sleep_until(due, stop)) return LoopEnd::stopped;
    }
    if (stop.stop_requested()) return LoopEnd::stopped;
    Tick tick;
    tick.index = next.tick;
    tick.due = due;
    tick.steady = clock.steady_now();
    tick.wall = clock.system_now();
    tick.skipped_before = next.skipped;
    on_tick(tick);
    ++ran;
    next = schedule.next_after(next.tick, clock.steady_now());
  }
}

}  // namespace sparkops::sampling
