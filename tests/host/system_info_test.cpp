#include "host/system_info.hpp"

#include <gtest/gtest.h>

#include "support/test_support.hpp"

namespace sparkops::host {

TEST(OsRelease, PrettyNameUnquoted) {
  const auto name =
      parse_os_release_pretty_name("NAME=\"Ubuntu\"\nPRETTY_NAME=\"Ubuntu 24.04.3 LTS\"\n");
  ASSERT_TRUE(name);
  EXPECT_EQ(*name, "Ubuntu 24.04.3 LTS");
  EXPECT_EQ(parse_os_release_pretty_name("PRETTY_NAME=Arch\n").value(), "Arch");
  EXPECT_EQ(parse_os_release_pretty_name("PRETTY_NAME=\"a \\\"b\\\"\"\n").value(), "a \"b\"");
  EXPECT_FALSE(parse_os_release_pretty_name("ID=debian\n").value().has_value());
}

TEST(OsRelease, UnterminatedQuoteIsMalformedNamingTheLine) {
  const auto name = parse_os_release_pretty_name("ID=x\nPRETTY_NAME=\"Ubuntu\n");
  ASSERT_FALSE(name);
  EXPECT_NE(name.error().detail.find("line 2"), std::string::npos);
}

TEST(Gb10Board, RecognisesSparkAndOemNames) {
  EXPECT_TRUE(names_gb10_board("NVIDIA DGX Spark"));
  EXPECT_TRUE(names_gb10_board("ASUS Ascent GX10"));
  EXPECT_FALSE(names_gb10_board("Standard PC (Q35 + ICH9, 2009)"));
}

TEST(SystemInfoRead, Gb10FixtureRoot) {
  const auto info = read_system_info(HostRoot(test::fixture("roots/gb10-idle")));
  ASSERT_TRUE(info);
  EXPECT_EQ(info->hostname, "spark-7f3a");
  EXPECT_EQ(info->kernel_release, "6.11.0-1016-nvidia");
  EXPECT_EQ(info->architecture, "aarch64");
  EXPECT_EQ(info->os_pretty_name, "Ubuntu 24.04.3 LTS");
  EXPECT_EQ(info->board_model, "NVIDIA DGX Spark");
  ASSERT_TRUE(info->gb10_evidence);
  EXPECT_NE(info->gb10_evidence->find("DMI product_name"), std::string::npos);
}

TEST(SystemInfoRead, AcpiDeviceAloneIsEvidence) {
  test::TempDir dir;
  test::write_text(dir / "sys/bus/acpi/devices/NVDA8800:00/hid", "NVDA8800\n");
  test::write_text(dir / "proc/device-tree/model", std::string("Some Board\0", 11));
  const auto info = read_system_info(HostRoot(dir.path()));
  ASSERT_TRUE(info);
  EXPECT_EQ(info->board_model, "Some Board");
  EXPECT_EQ(info->gb10_evidence, "ACPI device NVDA8800 (GB10 MTEL)");
  EXPECT_FALSE(info->hostname.has_value());
  EXPECT_FALSE(info->architecture.has_value());  // not the live root: no uname fallback
}

TEST(SystemInfoRead, X86RootHasNoGb10Evidence) {
  const auto info = read_system_info(HostRoot(test::fixture("roots/x86-bare")));
  ASSERT_TRUE(info);
  EXPECT_EQ(info->architecture, "x86_64");
  EXPECT_EQ(info->os_pretty_name, "Debian GNU/Linux 12 (bookworm)");
  EXPECT_FALSE(info->gb10_evidence.has_value());
  EXPECT_FALSE(info->board_model.has_value());
}

}  // namespace sparkops::host
