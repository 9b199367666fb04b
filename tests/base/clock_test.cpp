#include "base/clock.hpp"

#include <gtest/gtest.h>

namespace sparkops {

TEST(ManualClock, SleepJumpsToDeadlineAndMovesBothClocks) {
  using namespace std::chrono_literals;
  ManualClock clock;
  const auto s0 = clock.steady_now();
  const auto w0 = clock.system_now();
  EXPECT_TRUE(clock.sleep_until(s0 + 30s));
  EXPECT_EQ(clock.steady_now() - s0, 30s);
  EXPECT_EQ(clock.system_now() - w0, 30s);
}

TEST(ManualClock, WallJumpLeavesSteadyAlone) {
  using namespace std::chrono_literals;
  ManualClock clock;
  const auto s0 = clock.steady_now();
  clock.jump_system(-1h);
  EXPECT_EQ(clock.steady_now(), s0);
}

}  // namespace sparkops
