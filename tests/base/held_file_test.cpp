#include "base/held_file.hpp"

#include <gtest/gtest.h>

#include "support/test_support.hpp"

namespace sparkops {

TEST(HeldFile, RereadSeesRewrittenContent) {
  test::TempDir dir;
  test::write_text(dir / "temp1_input", "41000\n");
  auto f = HeldFile::open(dir / "temp1_input");
  ASSERT_TRUE(f);
  EXPECT_EQ(*f->reread(), "41000\n");
  test::write_text(dir / "temp1_input", "76500\n");
  EXPECT_EQ(*f->reread(), "76500\n");
}

TEST(HeldFile, GrowsPastTheFirstBufferUpToTheLimit) {
  test::TempDir dir;
  test::write_text(dir / "vmstat", std::string(10000, 'x'));
  auto f = HeldFile::open(dir / "vmstat", 16384);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->reread()->size(), 10000u);
  test::write_text(dir / "vmstat", std::string(20000, 'x'));
  const auto r = f->reread();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::too_large);
}

TEST(HeldFile, UnlinkedFileIsReportedGone) {
  test::TempDir dir;
  test::write_text(dir / "power1_input", "25100000\n");
  auto f = HeldFile::open(dir / "power1_input");
  ASSERT_TRUE(f);
  std::filesystem::remove(dir / "power1_input");
  const auto r = f->reread();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::not_found);
}

TEST(HeldFile, MissingFileIsNotFound) {
  test::TempDir dir;
  const auto f = HeldFile::open(dir / "nope");
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error().code, Errc::not_found);
}

TEST(HeldFile, RereadsProcFilesFromTheStart) {
  auto f = HeldFile::open("/proc/self/stat");
  ASSERT_TRUE(f);
  const std::string first(*f->reread());
  const auto second = f->reread();
  ASSERT_TRUE(second);
  EXPECT_FALSE(first.empty());
  EXPECT_EQ(first.substr(0, first.find(' ')), second->substr(0, second->find(' ')));  // same pid
}

}  // namespace sparkops
