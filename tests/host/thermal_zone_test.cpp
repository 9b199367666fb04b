#include "host/thermal_zone.hpp"

#include <filesystem>

#include <gtest/gtest.h>

#include "support/test_support.hpp"

namespace sparkops::host {

TEST(ThermalTemp, ParsesMillidegreesAndRejectsJunk) {
  EXPECT_EQ(parse_thermal_temp("36000\n", "temp").value(), 36000);
  EXPECT_EQ(parse_thermal_temp("-5000\n", "temp").value(), -5000);
  const auto bad = parse_thermal_temp("36 C\n", "/sys/class/thermal/thermal_zone0/temp");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().detail.find("thermal_zone0/temp line 1"), std::string::npos);
}

TEST(ThermalZonesRead, SortedNumericallyWithUnreadableTempAbsent) {
  test::TempDir dir;
  test::write_text(dir / "sys/class/thermal/thermal_zone10/type", "acpitz\n");
  test::write_text(dir / "sys/class/thermal/thermal_zone10/temp", "41000\n");
  test::write_text(dir / "sys/class/thermal/thermal_zone2/type", "x86_pkg_temp\n");
  std::filesystem::create_directories(dir / "sys/class/thermal/thermal_zone2/temp");  // EISDIR
  test::write_text(dir / "sys/class/thermal/cooling_device0/type", "Processor\n");
  const auto zones = read_thermal_zones(HostRoot(dir.path()));
  ASSERT_TRUE(zones);
  ASSERT_EQ(zones->size(), 2u);
  EXPECT_EQ((*zones)[0].zone, "thermal_zone2");
  EXPECT_FALSE((*zones)[0].temp_millicelsius.has_value());
  EXPECT_EQ((*zones)[1].type, "acpitz");
  EXPECT_EQ((*zones)[1].temp_millicelsius, 41000);
}

TEST(ThermalZonesRead, MalformedTempIsAnError) {
  test::TempDir dir;
  test::write_text(dir / "sys/class/thermal/thermal_zone0/type", "acpitz\n");
  test::write_text(dir / "sys/class/thermal/thermal_zone0/temp", "warm\n");
  const auto zones = read_thermal_zones(HostRoot(dir.path()));
  ASSERT_FALSE(zones);
  EXPECT_EQ(zones.error().code, Errc::malformed);
}

TEST(ThermalZonesRead, NoThermalClassIsEmpty) {
  const auto zones = read_thermal_zones(HostRoot(test::fixture("roots/x86-bare")));
  ASSERT_TRUE(zones);
  EXPECT_TRUE(zones->empty());
}

}  // namespace sparkops::host
