#include "host/pressure.hpp"

#include <filesystem>

#include <gtest/gtest.h>

#include "support/test_support.hpp"

namespace sparkops::host {

TEST(PsiParse, ReadsSomeAndFull) {
  // /proc/pressure/memory on a 6.8 kernel.
  const auto psi = parse_psi(
      "some avg10=4.12 avg60=2.37 avg300=0.81 total=48213377\n"
      "full avg10=1.05 avg60=0.52 avg300=0.14 total=9876543\n",
      "/proc/pressure/memory");
  ASSERT_TRUE(psi);
  EXPECT_DOUBLE_EQ(psi->some.avg10, 4.12);
  EXPECT_DOUBLE_EQ(psi->some.avg300, 0.81);
  EXPECT_EQ(psi->some.total_us, 48213377u);
  ASSERT_TRUE(psi->full.has_value());
  EXPECT_DOUBLE_EQ(psi->full->avg60, 0.52);
  EXPECT_EQ(psi->full->total_us, 9876543u);
}

TEST(PsiParse, CpuWithoutFullLineOnOlderKernels) {
  const auto psi =
      parse_psi("some avg10=0.50 avg60=0.40 avg300=0.30 total=1234567\n", "/proc/pressure/cpu");
  ASSERT_TRUE(psi);
  EXPECT_FALSE(psi->full.has_value());
}

TEST(PsiParse, NoSomeLineIsMalformed) {
  const auto psi =
      parse_psi("full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", "/proc/pressure/io");
  ASSERT_FALSE(psi);
  EXPECT_EQ(psi.error().code, Errc::malformed);
  EXPECT_NE(psi.error().detail.find("/proc/pressure/io"), std::string::npos);
}

TEST(PsiParse, BadNumberIsMalformedNamingTheLine) {
  const auto psi = parse_psi(
      "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
      "full avg10=x avg60=0.00 avg300=0.00 total=0\n",
      "/proc/pressure/memory");
  ASSERT_FALSE(psi);
  EXPECT_NE(psi.error().detail.find("/proc/pressure/memory line 2"), std::string::npos);
}

TEST(PsiParse, MissingTotalIsMalformed) {
  EXPECT_FALSE(parse_psi("some avg10=0.00 avg60=0.00 avg300=0.00\n", "f"));
}

TEST(PsiRead, MissingFileIsAbsent) {
  test::TempDir dir;
  const auto psi = read_psi(HostRoot(dir.path()), PsiResource::memory);
  ASSERT_TRUE(psi);
  EXPECT_FALSE(psi->has_value());
}

TEST(PsiRead, UnreadableFileIsAnIoErrorNamingIt) {
  // A directory where the file should be: read() fails with EISDIR, as any unreadable file would.
  test::TempDir dir;
  std::filesystem::create_directories(dir / "proc/pressure/io");
  const auto psi = read_psi(HostRoot(dir.path()), PsiResource::io);
  ASSERT_FALSE(psi);
  EXPECT_EQ(psi.error().code, Errc::io);
  EXPECT_NE(psi.error().detail.find("proc/pressure/io"), std::string::npos);
}

TEST(PsiRead, ReadsFixtureRoot) {
  const auto psi = read_psi(HostRoot(test::fixture("roots/gb10-finetune")), PsiResource::memory);
  ASSERT_TRUE(psi);
  ASSERT_TRUE(psi->has_value());
  EXPECT_DOUBLE_EQ((*psi)->some.avg10, 4.12);
}

}  // namespace sparkops::host
