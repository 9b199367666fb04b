// The [analyze] section as one typed value: the key table prints its defaults, and a file's
// values reach every holder (offline diagnosis and the live rule take the same struct).

#include "config/slowdown_thresholds.hpp"

#include <gtest/gtest.h>

namespace sparkops::config {
namespace {

TEST(SlowdownThresholds, TheKeyTablePrintsTheTypedDefaults) {
  const Config c;
  EXPECT_EQ(c.setting("analyze.slowdown_factor").value, "1.3");
  EXPECT_EQ(c.setting("analyze.sustain_steps").value, "5");
  EXPECT_EQ(c.setting("analyze.min_wall_share").value, "0.75");
  EXPECT_EQ(c.setting("analyze.noise_sigmas").value, "3");
  EXPECT_EQ(c.setting("analyze.warmup_steps").value, "5");
  const SlowdownThresholds t = slowdown_thresholds(c);
  const SlowdownThresholds defaults;
  EXPECT_EQ(t.slowdown_factor, defaults.slowdown_factor);
  EXPECT_EQ(t.sustain_steps, defaults.sustain_steps);
  EXPECT_EQ(t.min_wall_share, defaults.min_wall_share);
  EXPECT_EQ(t.noise_sigmas, defaults.noise_sigmas);
  EXPECT_EQ(t.warmup_steps, defaults.warmup_steps);
}

TEST(SlowdownThresholds, AFileOverridesThem) {
  Config c;
  ASSERT_TRUE(
      c.apply_toml("[analyze]\nslowdown_factor = 1.5\nsustain_steps = 8\nmin_wall_share = 0.5\n"
                   "noise_sigmas = 2\nwarmup_steps = 0\n",
                   "user.toml"));
  const SlowdownThresholds t = slowdown_thresholds(c);
  EXPECT_EQ(t.slowdown_factor, 1.5);
  EXPECT_EQ(t.sustain_steps, 8);
  EXPECT_EQ(t.min_wall_share, 0.5);
  EXPECT_EQ(t.noise_sigmas, 2.0);
  EXPECT_EQ(t.warmup_steps, 0);
}

}  // namespace
}  // namespace sparkops::config
