#include "host/cpufreq.hpp"

#include <gtest/gtest.h>

#include "support/test_support.hpp"

namespace sparkops::host {

TEST(Cpufreq, ParsesKhz) {
  EXPECT_EQ(parse_khz("3504000\n", "f").value(), 3504000u);
  const auto bad =
      parse_khz("<unknown>\n", "/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().detail.find("scaling_cur_freq line 1"), std::string::npos);
}

TEST(Cpufreq, ReadsEveryCoreOfTheGb10RootInOrder) {
  const auto cores = read_cpufreq(HostRoot(test::fixture("roots/gb10-finetune")));
  ASSERT_TRUE(cores);
  ASSERT_EQ(cores->size(), 20u);
  EXPECT_EQ((*cores)[2].cpu, 2u);
  EXPECT_EQ((*cores)[10].cpu, 10u);
  EXPECT_EQ((*cores)[0].max_khz, 2808000u);
  EXPECT_EQ((*cores)[19].max_khz, 3900000u);
  EXPECT_EQ((*cores)[12].cur_khz, 3852000u);
  EXPECT_EQ((*cores)[12].min_khz, 338000u);
}

TEST(Cpufreq, CoresWithoutCpufreqAreSkippedAndMissingFieldsAbsent) {
  test::TempDir dir;
  test::write_text(dir / "sys/devices/system/cpu/cpu0/online", "1\n");
  test::write_text(dir / "sys/devices/system/cpu/cpu1/cpufreq/scaling_cur_freq", "800000\n");
  test::write_text(dir / "sys/devices/system/cpu/cpufreq/policy0/scaling_cur_freq", "1\n");
  const auto cores = read_cpufreq(HostRoot(dir.path()));
  ASSERT_TRUE(cores);
  ASSERT_EQ(cores->size(), 1u);
  EXPECT_EQ((*cores)[0].cpu, 1u);
  EXPECT_EQ((*cores)[0].cur_khz, 800000u);
  EXPECT_FALSE((*cores)[0].max_khz.has_value());
}

}  // namespace sparkops::host
