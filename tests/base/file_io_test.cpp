#include "base/file_io.hpp"

#include <gtest/gtest.h>

#include "support/test_support.hpp"

namespace sparkops {

TEST(ReadFile, MissingIsNotFoundAndNamesThePath) {
  test::TempDir dir;
  const auto r = read_file(dir / "nope");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::not_found);
  EXPECT_NE(r.error().detail.find("nope"), std::string::npos);
}

TEST(ReadFile, OverLimitIsTooLarge) {
  test::TempDir dir;
  test::write_text(dir / "big", std::string(1000, 'x'));
  const auto r = read_file(dir / "big", 100);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::too_large);
}

TEST(ReadFile, ReadsProcFilesThatReportSizeZero) {
  const auto r = read_file("/proc/self/stat");
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->empty());
}

TEST(WriteFileAtomic, ReplacesContentAndLeavesNoTemp) {
  test::TempDir dir;
  ASSERT_TRUE(write_file_atomic(dir / "f", "one"));
  ASSERT_TRUE(write_file_atomic(dir / "f", "two"));
  EXPECT_EQ(test::slurp(dir / "f"), "two");
  int entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++entries;
  EXPECT_EQ(entries, 1);
}

}  // namespace sparkops
