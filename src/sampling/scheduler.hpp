#pragma once
// The sampling schedule on the monotonic clock: tick k is due at t0 + k·interval, so there is no
// drift over days and a wall-clock step (NTP, date) changes only the stamps. A tick that runs more
// than one interval late skips the ticks it missed instead of bursting to catch up.

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <stop_token>

#include "base/clock.hpp"

namespace sparkops::sampling {

class TickSchedule {
 public:
  TickSchedule(SteadyTime t0, std::chrono::nanoseconds interval);
  SteadyTime due(std::uint64_t tick) const;
  std::chrono::nanoseconds interval() const { return interval_; }

  struct Next {
    std::uint64_t tick = 0;
    std::uint64_t skipped = 0;  // ticks given up because they were missed
  };
  // The tick to run after `done` when the clock reads `now`: done + 1, or, when that one is late by
  // more than one interval, the latest tick already due.
  Next next_after(std::uint64_t done, SteadyTime now) const;

 private:
  SteadyTime t0_;
  std::chrono::nanoseconds interval_;
};

struct ScheduleLimits {
  std::optional<std::uint64_t> count;                // stop after this many ticks
  std::optional<std::chrono::nanoseconds> duration;  // only ticks due before t0 + duration
};

struct Tick {
  std::uint64_t index = 0;
  SteadyTime due{};
  SteadyTime steady{};  // when it actually runs
  SystemTime wall{};    // the stamp
  std::uint64_t skipped_before = 0;
};

enum class LoopEnd { count_reached, duration_reached, stopped };

// The one tick loop of every long-running command (sample, serve; watch polls its job's output
// and keeps the same TickSchedule): runs ticks on `clock` until a limit is reached or a stop is
// requested on `stop`. The stop is checked before every tick and wakes a sleep between ticks at
// once; a tick in progress finishes. The first tick runs at once.
LoopEnd run_schedule(Clock& clock, std::chrono::nanoseconds interval, const ScheduleLimits& limits,
                     std::stop_token stop, const std::function<void(const Tick&)>& on_tick);

}  // namespace sparkops::sampling
