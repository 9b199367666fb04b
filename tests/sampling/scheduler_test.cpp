#include "sampling/scheduler.hpp"

#include <stop_token>
#include <thread>

#include <gtest/gtest.h>

namespace sparkops::sampling {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(TickSchedule, NextTickIsPlannedFromStartNotFromLastRun) {
  const SteadyTime t0{seconds{100}};
  const TickSchedule s(t0, seconds{30});
  // Tick 1 ran 400 ms late; tick 2 is still due at t0 + 60 s.
  const auto next = s.next_after(1, t0 + seconds{30} + milliseconds{400});
  EXPECT_EQ(next.tick, 2U);
  EXPECT_EQ(next.skipped, 0U);
  EXPECT_EQ(s.due(next.tick), t0 + seconds{60});
  EXPECT_EQ(s.due(2880), t0 + std::chrono::hours{24});  // no drift after a day
}

TEST(TickSchedule, LateByMoreThanOneIntervalSkipsMissedTicks) {
  const SteadyTime t0{seconds{0}};
  const TickSchedule s(t0, seconds{10});
  // Tick 3 finished at 75 s (a stall): ticks 4, 5 and 6 are missed; run 7 (due 70 s) now.
  const auto next = s.next_after(3, SteadyTime{seconds{75}});
  EXPECT_EQ(next.tick, 7U);
  EXPECT_EQ(next.skipped, 3U);
}

TEST(TickSchedule, LateByLessThanOneIntervalRunsTheNextTickAtOnce) {
  const TickSchedule s(SteadyTime{seconds{0}}, seconds{10});
  const auto next = s.next_after(3, SteadyTime{seconds{45}});
  EXPECT_EQ(next.tick, 4U);
  EXPECT_EQ(next.skipped, 0U);
}

TEST(RunSchedule, CountLimitRunsExactlyNTicksOnTheMonotonicGrid) {
  ManualClock clock;
  const SteadyTime t0 = clock.steady_now();
  std::stop_source stop;
  std::vector<Tick> ticks;
  const auto end = run_schedule(clock, seconds{30}, {5, std::nullopt}, stop.get_token(),
                                [&](const Tick& t) { ticks.push_back(t); });
  EXPECT_EQ(end, LoopEnd::count_reached);
  ASSERT_EQ(ticks.size(), 5U);
  for (std::size_t k = 0; k < ticks.size(); ++k) {
    EXPECT_EQ(ticks[k].index, k);
    EXPECT_EQ(ticks[k].steady, t0 + seconds{30} * static_cast<int>(k));
  }
}

TEST(RunSchedule, WallClockJumpChangesStampsNotTheSchedule) {
  ManualClock clock;
  const SteadyTime t0 = clock.steady_now();
  std::stop_source stop;
  std::vector<Tick> ticks;
  run_schedule(clock, seconds{30}, {4, std::nullopt}, stop.get_token(), [&](const Tick& t) {
    ticks.push_back(t);
    if (t.index == 1) clock.jump_system(-std::chrono::hours{1});  // NTP steps back an hour
  });
  ASSERT_EQ(ticks.size(), 4U);
  EXPECT_EQ(ticks[3].steady, t0 + seconds{90});
  EXPECT_EQ(ticks[2].wall - ticks[1].wall, seconds{30} - std::chrono::hours{1});
  EXPECT_EQ(ticks[3].wall - ticks[2].wall, seconds{30});
}

TEST(RunSchedule, SlowTickSkipsInsteadOfBursting) {
  ManualClock clock;
  std::stop_source stop;
  std::vector<Tick> ticks;
  run_schedule(clock, seconds{1}, {4, std::nullopt}, stop.get_token(), [&](const Tick& t) {
    ticks.push_back(t);
    if (t.index == 1) clock.advance(milliseconds{3500});  // this tick took 3.5 s
  });
  ASSERT_EQ(ticks.size(), 4U);
  EXPECT_EQ(ticks[2].index, 4U);
  EXPECT_EQ(ticks[2].skipped_before, 2U);
  EXPECT_EQ(ticks[3].index, 5U);
}

TEST(RunSchedule, DurationLimitCountsTicksDueBeforeTheEnd) {
  ManualClock clock;
  std::stop_source stop;
  int n = 0;
  const auto end = run_schedule(clock, milliseconds{500}, {std::nullopt, seconds{10}},
                                stop.get_token(), [&](const Tick&) { ++n; });
  EXPECT_EQ(end, LoopEnd::duration_reached);
  EXPECT_EQ(n, 20);
}

TEST(RunSchedule, StopFlagEndsTheLoopBeforeTheNextTick) {
  ManualClock clock;
  std::stop_source stop;
  int n = 0;
  const auto end = run_schedule(clock, seconds{1}, {}, stop.get_token(), [&](const Tick&) {
    if (++n == 3) stop.request_stop();
  });
  EXPECT_EQ(end, LoopEnd::stopped);
  EXPECT_EQ(n, 3);
}

TEST(RunSchedule, AStopRequestedBeforeTheLoopRunsNoTick) {
  ManualClock clock;
  std::stop_source stop;
  stop.request_stop();
  int n = 0;
  EXPECT_EQ(run_schedule(clock, seconds{1}, {}, stop.get_token(), [&](const Tick&) { ++n; }),
            LoopEnd::stopped);
  EXPECT_EQ(n, 0);
}

TEST(RunSchedule, AStopFromAnotherThreadWakesTheSleepBetweenTicks) {
  // An hour between ticks on the real clock: the loop ends only because the stop wakes its sleep.
  SystemClock clock;
  std::stop_source stop;
  int n = 0;
  std::thread stopper;
  const auto end =
      run_schedule(clock, std::chrono::hours{1}, {}, stop.get_token(), [&](const Tick&) {
        ++n;
        stopper = std::thread([&] { stop.request_stop(); });
      });
  stopper.join();
  EXPECT_EQ(end, LoopEnd::stopped);
  EXPECT_EQ(n, 1);
}

}  // namespace
}  // namespace sparkops::sampling
