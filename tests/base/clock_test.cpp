#include "base/clock.hpp"

#include <stop_token>
#include <thread>

#include <gtest/gtest.h>

namespace sparkops {

TEST(ManualClock, SleepJumpsToDeadlineAndMovesBothClocks) {
  using namespace std::chrono_literals;
  ManualClock clock;
  const auto s0 = clock.steady_now();
  const auto w0 = clock.system_now();
  EXPECT_TRUE(clock.sleep_until(s0 + 30s, std::stop_token{}));
  EXPECT_EQ(clock.steady_now() - s0, 30s);
  EXPECT_EQ(clock.system_now() - w0, 30s);
}

TEST(ManualClock, AStoppedSleepDoesNotMove) {
  using namespace std::chrono_literals;
  ManualClock clock;
  const auto s0 = clock.steady_now();
  std::stop_source stop;
  stop.request_stop();
  EXPECT_FALSE(clock.sleep_until(s0 + 30s, stop.get_token()));
  EXPECT_EQ(clock.steady_now(), s0);
}

TEST(SystemClock, APastDeadlineReturnsAtOnceAndAStopWakesALongSleep) {
  using namespace std::chrono_literals;
  SystemClock clock;
  EXPECT_TRUE(clock.sleep_until(clock.steady_now() - 1s, std::stop_token{}));
  std::stop_source stop;
  // An hour's sleep: it returns only because the other thread's request wakes it.
  std::thread stopper([&] { stop.request_stop(); });
  EXPECT_FALSE(clock.sleep_until(clock.steady_now() + 1h, stop.get_token()));
  stopper.join();
}

TEST(ManualClock, WallJumpLeavesSteadyAlone) {
  using namespace std::chrono_literals;
  ManualClock clock;
  const auto s0 = clock.steady_now();
  clock.jump_system(-1h);
  EXPECT_EQ(clock.steady_now(), s0);
}

}  // namespace sparkops
