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

TEST(PsiTotalsParse, TotalsAsTheFullParseWithoutTheAverages) {
  for (const std::string_view text : {
           std::string_view("some avg10=4.12 avg60=2.37 avg300=0.81 total=48213377\n"
                            "full avg10=1.05 avg60=0.52 avg300=0.14 total=9876543\n"),
           std::string_view("some avg10=0.50 avg60=0.40 avg300=0.30 total=1234567\n"),
           std::string_view("  some  avg10=0.00\tavg60=0.00 avg300=0.00 total=0 extra=1\n\n"),
       }) {
    const auto full = parse_psi(text, "f");
    const auto totals = parse_psi_totals(text, "f");
    ASSERT_TRUE(full);
    ASSERT_TRUE(totals) << totals.error().detail;
    EXPECT_EQ(totals->some.total_us, full->some.total_us);
    ASSERT_EQ(totals->full.has_value(), full->full.has_value());
    if (full->full) {
      EXPECT_EQ(totals->full->total_us, full->full->total_us);
    }
    EXPECT_EQ(totals->some.avg10, 0.0);  // not read
  }
}

TEST(PsiTotalsParse, ChecksLinesKeysAndTotalsButNotTheAveragesValues) {
  // An average that is not a number: refused by the full parse, not looked at for the totals.
  const std::string_view odd_average =
      "some avg10=x avg60=0.00 avg300=0.00 total=7\nfull avg10=0 avg60=0 avg300=0 total=8\n";
  EXPECT_FALSE(parse_psi(odd_average, "f"));
  ASSERT_TRUE(parse_psi_totals(odd_average, "f"));
  EXPECT_EQ(parse_psi_totals(odd_average, "f")->full->total_us, 8u);
  // Everything else is refused as the full parse refuses it.
  for (const std::string_view bad : {
           std::string_view("some avg10=0.00 avg60=0.00 avg300=0.00\n"),            // no total
           std::string_view("some avg10=0.00 avg60=0.00 total=5\n"),                // no avg300
           std::string_view("some avg10=0 avg60=0 avg300=0 total=lots\n"),          // bad total
           std::string_view("full avg10=0 avg60=0 avg300=0 total=0\n"),             // no some
           std::string_view("some avg10=0 avg60=0 avg300=0 total=1\nfull junk\n"),  // no '='
           std::string_view(""),
       }) {
    EXPECT_FALSE(parse_psi(bad, "f")) << bad;
    const auto totals = parse_psi_totals(bad, "/proc/pressure/memory");
    ASSERT_FALSE(totals) << bad;
    EXPECT_EQ(totals.error().code, Errc::malformed);
    EXPECT_NE(totals.error().detail.find("/proc/pressure/memory"), std::string::npos);
  }
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
