#include "host/sensors.hpp"

#include <gtest/gtest.h>

#include "support/test_support.hpp"

namespace sparkops::host {

namespace {
HwmonChip chip(std::string name, std::vector<HwmonTemp> temps,
               std::vector<HwmonPower> powers = {}) {
  HwmonChip c;
  c.name = std::move(name);
  c.temps = std::move(temps);
  c.powers = std::move(powers);
  return c;
}
}  // namespace

TEST(HottestSensor, NamesChipAndLabelOrChannel) {
  const std::vector<HwmonChip> chips = {chip("acpitz", {{1, std::nullopt, 38000, {}, {}}}),
                                        chip("mlx5", {{1, "asic", 41000, {}, {}}})};
  const auto hot = hottest_sensor(chips, {});
  ASSERT_TRUE(hot);
  EXPECT_EQ(hot->name, "mlx5/asic");
  EXPECT_EQ(hot->temp_millicelsius, 41000);
  const auto unlabelled = hottest_sensor({chips[0]}, {});
  EXPECT_EQ(unlabelled->name, "acpitz/temp1");
}

TEST(HottestSensor, ThermalZonesCompeteAndAreNamedWithTheirType) {
  const std::vector<ThermalZone> zones = {{"thermal_zone0", "acpitz", 87000},
                                          {"thermal_zone1", "x", std::nullopt}};
  const auto hot = hottest_sensor({chip("nvme", {{1, "Composite", 55850, {}, {}}})}, zones);
  ASSERT_TRUE(hot);
  EXPECT_EQ(hot->name, "thermal_zone0(acpitz)");
  EXPECT_EQ(hot->temp_millicelsius, 87000);
}

TEST(HottestSensor, SkipsSpbmHeadroomAndImplausibleValues) {
  const std::vector<HwmonChip> chips = {
      chip("spbm", {{1, "soc", 39100, {}, {}}, {2, "tj_max_c", 65000, {}, {}}}),
      chip("broken", {{1, std::nullopt, 255000, {}, {}}, {2, std::nullopt, -273150, {}, {}}})};
  const auto hot = hottest_sensor(chips, {});
  ASSERT_TRUE(hot);
  EXPECT_EQ(hot->name, "spbm/soc");
}

TEST(HottestSensor, NothingReadsIsAbsent) {
  EXPECT_FALSE(hottest_sensor({}, {}).has_value());
}

TEST(SpbmRails, MatchedByLabelInCanonicalOrderWhateverTheChannelNumber) {
  HwmonPower gpu{3, "gpu", 80312000, {}, {}, {}};
  HwmonPower total{9, "sys_total", 117430000, {}, {}, {}};
  HwmonPower unknown{1, "mystery", 1, {}, {}, {}};
  const std::vector<HwmonChip> chips = {chip("acpitz", {}, {{1, "gpu", 1, {}, {}, {}}}),
                                        chip("spbm", {}, {gpu, total, unknown})};
  const auto rails = spbm_rails(chips);
  ASSERT_EQ(rails.size(), 2u);
  EXPECT_EQ(rails[0].name, "sys_total");
  EXPECT_EQ(rails[0].power_microwatts, 117430000u);
  EXPECT_EQ(rails[1].name, "gpu");
  EXPECT_TRUE(spbm_rails({chips[0]}).empty());
}

TEST(SpbmStatusRead, ProchotLimitsAndBudgetsFromTheThrottledRoot) {
  const auto chips = read_hwmon_chips(HostRoot(test::fixture("roots/gb10-throttled")));
  ASSERT_TRUE(chips);
  const auto status = spbm_status(*chips);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->prochot, 1u);
  EXPECT_EQ(status->pl_level, 2u);
  ASSERT_EQ(status->limits.size(), 4u);
  EXPECT_EQ(status->limits[0].name, "pl1");
  EXPECT_EQ(status->limits[0].cap_microwatts, 140000000u);
  EXPECT_EQ(status->limits[0].max_microwatts, 140000000u);
  EXPECT_EQ(status->limits[2].name, "syspl1");
  EXPECT_EQ(status->limits[2].ewma_microwatts, 100987000u);
  ASSERT_EQ(status->budgets.size(), 4u);
  EXPECT_EQ(status->budgets[1].name, "budget_gpu");
  EXPECT_EQ(status->budgets[1].power_microwatts, 170000000u);
}

TEST(SpbmStatusRead, AbsentWithoutTheDriver) {
  const auto chips = read_hwmon_chips(HostRoot(test::fixture("roots/x86-bare")));
  ASSERT_TRUE(chips);
  EXPECT_FALSE(spbm_status(*chips).has_value());
}

}  // namespace sparkops::host
