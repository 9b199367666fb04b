#include "host/hwmon.hpp"

#include <filesystem>

#include <gtest/gtest.h>

#include "support/test_support.hpp"

namespace sparkops::host {

TEST(HwmonParse, BuildsChannelsSortedByIndexWithLabels) {
  // nvme hwmon on a 6.x kernel (temp2_max really reads 65261850 on many drives).
  const HwmonChip chip =
      parse_hwmon_chip("/sys/class/hwmon/hwmon1", {{"name", "nvme\n"},
                                                   {"temp10_input", "30000\n"},
                                                   {"temp1_label", "Composite\n"},
                                                   {"temp1_input", "36850\n"},
                                                   {"temp1_max", "81850\n"},
                                                   {"temp1_crit", "84850\n"},
                                                   {"temp2_label", "Sensor 1\n"},
                                                   {"temp2_input", "36850\n"},
                                                   {"temp2_max", "65261850\n"}});
  EXPECT_EQ(chip.dir, "hwmon1");
  EXPECT_EQ(chip.name, "nvme");
  ASSERT_EQ(chip.temps.size(), 3u);
  EXPECT_EQ(chip.temps[0].index, 1u);
  EXPECT_EQ(chip.temps[0].label, "Composite");
  EXPECT_EQ(chip.temps[0].input_millicelsius, 36850);
  EXPECT_EQ(chip.temps[0].crit_millicelsius, 84850);
  EXPECT_EQ(chip.temps[1].index, 2u);
  EXPECT_EQ(chip.temps[2].index, 10u);
  EXPECT_FALSE(chip.temps[2].label.has_value());
  EXPECT_TRUE(chip.notes.empty());
}

TEST(HwmonParse, ChannelWithoutReadingIsLeftOut) {
  // temp2_input failed to read (EIO): only its label made it into the map.
  const HwmonChip chip =
      parse_hwmon_chip("/sys/class/hwmon/hwmon0",
                       {{"name", "acpitz\n"}, {"temp1_input", "38000\n"}, {"temp2_label", "x\n"}});
  ASSERT_EQ(chip.temps.size(), 1u);
  EXPECT_EQ(chip.temps[0].index, 1u);
}

TEST(HwmonParse, PowerEnergyVoltageCurrentInKernelUnits) {
  const HwmonChip chip =
      parse_hwmon_chip("/sys/class/hwmon/hwmon6", {{"name", "spbm\n"},
                                                   {"power1_label", "sys_total\n"},
                                                   {"power1_input", "25112000\n"},
                                                   {"power2_average", "17204000\n"},
                                                   {"power11_label", "pl1\n"},
                                                   {"power11_input", "140000000\n"},
                                                   {"power11_cap", "140000000\n"},
                                                   {"power11_max", "140000000\n"},
                                                   {"energy1_label", "pkg\n"},
                                                   {"energy1_input", "88115600000\n"},
                                                   {"in0_input", "12000\n"},
                                                   {"curr1_input", "-150\n"},
                                                   {"prochot", "0\n"},
                                                   {"pl_level", "2\n"},
                                                   {"uevent", "DEVTYPE=hwmon\n"}});
  ASSERT_EQ(chip.powers.size(), 3u);
  EXPECT_EQ(chip.powers[0].label, "sys_total");
  EXPECT_EQ(chip.powers[0].input_microwatts, 25112000u);
  EXPECT_FALSE(chip.powers[1].input_microwatts.has_value());
  EXPECT_EQ(chip.powers[1].reading_microwatts(), 17204000u);
  EXPECT_EQ(chip.power_by_label("pl1")->cap_microwatts, 140000000u);
  EXPECT_EQ(chip.energy_by_label("pkg")->input_microjoules, 88115600000u);
  ASSERT_EQ(chip.voltages.size(), 1u);
  EXPECT_EQ(chip.voltages[0].index, 0u);
  EXPECT_EQ(chip.voltages[0].input_millivolts, 12000);
  ASSERT_EQ(chip.currents.size(), 1u);
  EXPECT_EQ(chip.currents[0].input_milliamps, -150);
  EXPECT_EQ(chip.status.at("prochot"), 0u);
  EXPECT_EQ(chip.status.at("pl_level"), 2u);
}

TEST(HwmonParse, MalformedValueDropsTheAttributeWithANoteNamingFileAndLine) {
  const HwmonChip chip = parse_hwmon_chip("/sys/class/hwmon/hwmon2", {{"name", "mlx5\n"},
                                                                      {"temp1_input", "hot\n"},
                                                                      {"temp2_input", "40000\n"},
                                                                      {"power1_input", "-5\n"}});
  ASSERT_EQ(chip.temps.size(), 1u);
  EXPECT_EQ(chip.temps[0].index, 2u);
  EXPECT_TRUE(chip.powers.empty());
  ASSERT_EQ(chip.notes.size(), 2u);
  EXPECT_NE(chip.notes[1].find("/sys/class/hwmon/hwmon2/temp1_input line 1"), std::string::npos);
}

TEST(HwmonValue, MalformedIsAnErrorNamingTheFile) {
  const auto v = parse_hwmon_value("12.5\n", "/sys/class/hwmon/hwmon0/temp1_input");
  ASSERT_FALSE(v);
  EXPECT_EQ(v.error().code, Errc::malformed);
  EXPECT_NE(v.error().detail.find("temp1_input line 1"), std::string::npos);
}

TEST(HwmonRead, MatchesChipsByNameInIndexOrder) {
  const auto chips = read_hwmon_chips(HostRoot(test::fixture("roots/gb10-idle")));
  ASSERT_TRUE(chips);
  ASSERT_EQ(chips->size(), 7u);
  EXPECT_EQ((*chips)[0].name, "acpitz");
  EXPECT_EQ(find_chips(*chips, "mlx5").size(), 4u);
  const HwmonChip* spbm = find_chip(*chips, "spbm");
  ASSERT_NE(spbm, nullptr);
  EXPECT_EQ(spbm->dir, "hwmon6");
  EXPECT_EQ(spbm->powers.size(), 22u);
  EXPECT_EQ(spbm->energies.size(), 4u);
  EXPECT_EQ(spbm->temps.size(), 9u);
  EXPECT_EQ(find_chip(*chips, "coretemp"), nullptr);
}

TEST(HwmonRead, IndicesSortNumericallyNotAsText) {
  test::TempDir dir;
  test::write_text(dir / "sys/class/hwmon/hwmon10/name", "ten\n");
  test::write_text(dir / "sys/class/hwmon/hwmon9/name", "nine\n");
  const auto chips = read_hwmon_chips(HostRoot(dir.path()));
  ASSERT_TRUE(chips);
  ASSERT_EQ(chips->size(), 2u);
  EXPECT_EQ((*chips)[0].name, "nine");
  EXPECT_EQ((*chips)[1].name, "ten");
}

TEST(HwmonRead, FollowsSymlinksAndOldStyleDeviceDirectories) {
  // Real sysfs: hwmonN is a relative symlink into /sys/devices; old drivers keep attributes in
  // device/.
  test::TempDir dir;
  test::write_text(dir / "sys/devices/platform/coretemp.0/hwmon/hwmon3/name", "coretemp\n");
  test::write_text(dir / "sys/devices/platform/coretemp.0/hwmon/hwmon3/temp1_input", "45000\n");
  test::write_text(dir / "sys/devices/virtual/old/hwmon4/device/name", "w83627hf\n");
  test::write_text(dir / "sys/devices/virtual/old/hwmon4/device/temp1_input", "30000\n");
  std::filesystem::create_directories(dir / "sys/class/hwmon");
  std::filesystem::create_directory_symlink("../../devices/platform/coretemp.0/hwmon/hwmon3",
                                            dir / "sys/class/hwmon/hwmon3");
  std::filesystem::create_directory_symlink("../../devices/virtual/old/hwmon4",
                                            dir / "sys/class/hwmon/hwmon4");
  const auto chips = read_hwmon_chips(HostRoot(dir.path()));
  ASSERT_TRUE(chips);
  ASSERT_EQ(chips->size(), 2u);
  EXPECT_EQ((*chips)[0].name, "coretemp");
  EXPECT_EQ((*chips)[0].temps.at(0).input_millicelsius, 45000);
  EXPECT_EQ((*chips)[1].name, "w83627hf");
  EXPECT_EQ((*chips)[1].temps.at(0).input_millicelsius, 30000);
}

TEST(HwmonRead, UnreadableReadingLeavesThatChannelOut) {
  // temp2_input is a directory: read() fails (EISDIR) the way EIO does on real sysfs.
  test::TempDir dir;
  test::write_text(dir / "sys/class/hwmon/hwmon0/name", "mlx5\n");
  test::write_text(dir / "sys/class/hwmon/hwmon0/temp1_input", "41000\n");
  test::write_text(dir / "sys/class/hwmon/hwmon0/temp2_label", "module\n");
  std::filesystem::create_directories(dir / "sys/class/hwmon/hwmon0/temp2_input");
  const auto chips = read_hwmon_chips(HostRoot(dir.path()));
  ASSERT_TRUE(chips);
  ASSERT_EQ(chips->size(), 1u);
  ASSERT_EQ((*chips)[0].temps.size(), 1u);
  EXPECT_EQ((*chips)[0].temps[0].index, 1u);
}

TEST(HwmonRead, ChipWithoutNameIsSkippedAndNoClassDirIsEmpty) {
  test::TempDir dir;
  EXPECT_TRUE(read_hwmon_chips(HostRoot(dir.path()))->empty());
  test::write_text(dir / "sys/class/hwmon/hwmon0/temp1_input", "41000\n");
  EXPECT_TRUE(read_hwmon_chips(HostRoot(dir.path()))->empty());
}

}  // namespace sparkops::host
