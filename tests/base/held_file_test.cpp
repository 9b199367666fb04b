#include "base/held_file.hpp"

#include <csignal>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

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

// A regular file stays readable through its descriptor after an unlink (the reread is one pread,
// no fstat); unlinked() is how a holder of regular files tells.
TEST(HeldFile, UnlinkedRegularFileIsToldByUnlinkedNotByTheRead) {
  test::TempDir dir;
  test::write_text(dir / "power1_input", "25100000\n");
  auto f = HeldFile::open(dir / "power1_input");
  ASSERT_TRUE(f);
  EXPECT_FALSE(f->unlinked());
  std::filesystem::remove(dir / "power1_input");
  EXPECT_TRUE(f->unlinked());
  const auto r = f->reread();
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, "25100000\n");
}

// A kernel-generated file whose object is gone fails its read, and that is "not found", not an
// I/O error: /proc/PID/stat of a reaped child answers ESRCH, as a removed sysfs attribute answers
// ENODEV.
TEST(HeldFile, ProcFileOfAReapedProcessIsGone) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::pause();  // killed below
    ::_exit(0);
  }
  auto f = HeldFile::open("/proc/" + std::to_string(child) + "/stat");
  ASSERT_TRUE(f);
  EXPECT_TRUE(f->reread());
  ::kill(child, SIGKILL);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  const auto r = f->reread();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::not_found) << r.error().detail;
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
