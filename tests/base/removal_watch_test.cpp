#include "base/removal_watch.hpp"

#include <filesystem>

#include <gtest/gtest.h>

#include "support/test_support.hpp"

namespace sparkops {
namespace {

TEST(RemovalWatch, TellsAnUnlinkOnceAndNotARewrite) {
  test::TempDir dir;
  test::write_text(dir / "temp1_input", "41000\n");
  test::write_text(dir / "temp2_input", "42000\n");
  RemovalWatch watch;
  ASSERT_TRUE(watch.available());
  ASSERT_TRUE(watch.add(dir / "temp1_input"));
  ASSERT_TRUE(watch.add(dir / "temp2_input"));
  EXPECT_FALSE(watch.changed());
  test::write_text(dir / "temp1_input", "43000\n");  // a new value in place: same file
  EXPECT_FALSE(watch.changed());
  std::filesystem::remove(dir / "temp2_input");
  EXPECT_TRUE(watch.changed());
  EXPECT_FALSE(watch.changed());  // drained
}

TEST(RemovalWatch, TellsAFileReplacedByRename) {
  test::TempDir dir;
  test::write_text(dir / "meminfo", "MemTotal: 1 kB\n");
  test::write_text(dir / "meminfo.new", "MemTotal: 2 kB\n");
  RemovalWatch watch;
  ASSERT_TRUE(watch.add(dir / "meminfo"));
  std::filesystem::rename(dir / "meminfo.new", dir / "meminfo");
  EXPECT_TRUE(watch.changed());
}

TEST(RemovalWatch, NothingWatchedIsNeverChanged) {
  RemovalWatch watch;
  EXPECT_FALSE(watch.changed());
  EXPECT_FALSE(watch.add("/nonexistent/temp1_input"));
  EXPECT_FALSE(watch.changed());
}

}  // namespace
}  // namespace sparkops
