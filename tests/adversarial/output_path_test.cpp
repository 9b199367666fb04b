// Files sparkops writes when it runs as root in a folder someone else controls
// (docs/reliability.md "Files sparkops writes"). Each test plants what a hostile local user can
// plant: a symlink at the temporary name the old code would pick (`NAME.tmp.<pid>`), a symlinked
// output file or run folder, a symlink or hard link at drop_caches inside a --root tree, and a
// victim file that must come out unchanged.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "base/file_io.hpp"
#include "base/output_file.hpp"
#include "host/host_root.hpp"
#include "support/test_support.hpp"

namespace sparkops {
namespace {

namespace fs = std::filesystem;

const std::map<std::string, std::string> kNoGpu = {{"SPARKOPS_GPU_BACKEND", "none"}};

std::size_t lines_in(const std::string& text) {
  std::size_t n = 0;
  for (const char c : text) n += c == '\n' ? 1 : 0;
  return n;
}

TEST(OutputPath, AtomicWriteNeverWritesThroughAPlantedTemporaryName) {
  const test::TempDir tmp;
  const auto victim = tmp / "victim";
  test::write_text(victim, "root-owned\n");
  const auto target = tmp / "out.prom";
  // The old code wrote `out.prom.tmp.<pid>` with O_CREAT|O_TRUNC: through this link.
  fs::create_symlink(victim, fs::path(target.string() + fmt::format(".tmp.{}", ::getpid())));
  ASSERT_TRUE(write_file_atomic(target, "new\n"));
  EXPECT_EQ(test::slurp(victim), "root-owned\n");
  EXPECT_EQ(test::slurp(target), "new\n");
  EXPECT_FALSE(fs::is_symlink(target));
}

TEST(OutputPath, AtomicWriteReplacesASymlinkedTargetInsteadOfFollowingIt) {
  const test::TempDir tmp;
  const auto victim = tmp / "victim";
  test::write_text(victim, "root-owned\n");
  const auto target = tmp / "summary.json";
  fs::create_symlink(victim, target);
  ASSERT_TRUE(write_file_atomic(target, "{}\n"));
  EXPECT_EQ(test::slurp(victim), "root-owned\n");
  EXPECT_FALSE(fs::is_symlink(target));
}

TEST(OutputPath, SharedDirectoryWithoutStickyBitIsRefusedUnlessTrusted) {
  const test::TempDir tmp;
  const auto shared = tmp / "shared";
  fs::create_directory(shared);
  fs::permissions(shared, fs::perms::all);  // 0777, no sticky bit
  const auto refused = write_file_atomic(shared / "f", "x");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, Errc::conflict);
  EXPECT_NE(refused.error().detail.find("--trust-output-path"), std::string::npos);
  EXPECT_TRUE(write_file_atomic(shared / "f", "x", OutputTrust::trusted));
  fs::permissions(shared, fs::perms::all | fs::perms::sticky_bit);  // like /tmp
  EXPECT_TRUE(write_file_atomic(shared / "g", "x"));
}

TEST(OutputPath, SampleOutThroughASymlinkIsRefusedWithOneLine) {
  const test::TempDir tmp;
  const auto victim = tmp / "victim";
  test::write_text(victim, "root-owned\n");
  fs::create_symlink(victim, tmp / "thermal.csv");
  const auto r = test::run_sparkops({"--root", test::fixture("roots/gb10-idle").string(), "sample",
                                     "--count", "1", "--out", (tmp / "thermal.csv").string()},
                                    kNoGpu);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(lines_in(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("symlink"), std::string::npos) << r.err;
  EXPECT_EQ(test::slurp(victim), "root-owned\n");
}

TEST(OutputPath, SampleOutInASymlinkedDirectoryIsRefusedUnlessTrusted) {
  const test::TempDir tmp;
  fs::create_directory(tmp / "real");
  fs::create_directory_symlink(tmp / "real", tmp / "link");
  const std::vector<std::string> args = {"--root",
                                         test::fixture("roots/gb10-idle").string(),
                                         "sample",
                                         "--count",
                                         "1",
                                         "--out",
                                         (tmp / "link/t.csv").string()};
  const auto r = test::run_sparkops(args, kNoGpu);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(lines_in(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("symlinked directory"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(tmp / "real/t.csv"));
  auto trusted = args;
  trusted.insert(trusted.begin(), "--trust-output-path");
  const auto ok = test::run_sparkops(trusted, kNoGpu);
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_TRUE(fs::exists(tmp / "real/t.csv"));
}

TEST(OutputPath, WatchIntoASymlinkedRunFolderIsRefusedBeforeTheJobStarts) {
  const test::TempDir tmp;
  fs::create_directory(tmp / "real");
  fs::create_directory_symlink(tmp / "real", tmp / "run");
  const auto marker = tmp / "job-ran";
  const auto r = test::run_sparkops(
      {"--root", test::fixture("roots/gb10-idle").string(), "watch", "--no-preflight", "--dir",
       (tmp / "run").string(), "--", "sh", "-c", "touch " + marker.string()},
      kNoGpu);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(lines_in(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("symlinked directory"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(marker)) << "the job ran although its files were refused";
  EXPECT_TRUE(fs::is_empty(tmp / "real"));
}

TEST(OutputPath, WatchLogPlantedAsASymlinkIsNotWrittenThrough) {
  const test::TempDir tmp;
  const auto victim = tmp / "victim";
  test::write_text(victim, "root-owned\n");
  fs::create_directory(tmp / "run");
  fs::create_symlink(victim, tmp / "run/train.log");
  const auto r =
      test::run_sparkops({"--root", test::fixture("roots/gb10-idle").string(), "watch",
                          "--no-preflight", "--dir", (tmp / "run").string(), "--", "echo", "hi"},
                         kNoGpu);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("train.log: a symlink"), std::string::npos) << r.err;
  EXPECT_EQ(test::slurp(victim), "root-owned\n");
}

TEST(OutputPath, WatchSummaryPlantedAsASymlinkIsReplacedNotFollowed) {
  const test::TempDir tmp;
  const auto victim = tmp / "victim";
  test::write_text(victim, "root-owned\n");
  fs::create_directory(tmp / "run");
  fs::create_symlink(victim, tmp / "run/summary.json");
  const auto r = test::run_sparkops(
      {"--root", test::fixture("roots/gb10-idle").string(), "watch", "--no-preflight", "--interval",
       "50ms", "--dir", (tmp / "run").string(), "--", "sh", "-c", "exit 3"},
      kNoGpu);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(test::slurp(victim), "root-owned\n");
  EXPECT_FALSE(fs::is_symlink(tmp / "run/summary.json"));
  EXPECT_NE(test::slurp(tmp / "run/summary.json").find("\"exit_code\""), std::string::npos);
}

// drop_caches inside a captured --root tree replaced by a link to a file of someone else's.
fs::path root_with_drop_caches(const test::TempDir& tmp, bool hard_link) {
  const auto root = tmp / "root";
  fs::copy(test::fixture("roots/gb10-idle"), root, fs::copy_options::recursive);
  const auto drop = root / "proc/sys/vm/drop_caches";
  fs::remove(drop);
  if (hard_link) {
    fs::create_hard_link(tmp / "victim", drop);
  } else {
    fs::create_symlink(tmp / "victim", drop);
  }
  return root;
}

TEST(OutputPath, DropCachesSymlinkOrHardLinkUnderTheRootIsRefused) {
  for (const bool hard : {false, true}) {
    const test::TempDir tmp;
    test::write_text(tmp / "victim", "root-owned\n");
    const host::HostRoot root(root_with_drop_caches(tmp, hard));
    const auto wrote = root.write("/proc/sys/vm/drop_caches", "3");
    ASSERT_FALSE(wrote) << (hard ? "hard link" : "symlink");
    EXPECT_EQ(wrote.error().code, Errc::conflict);
    EXPECT_NE(wrote.error().detail.find(hard ? "hard links" : "symlink"), std::string::npos)
        << wrote.error().detail;
    EXPECT_EQ(test::slurp(tmp / "victim"), "root-owned\n");
  }
}

TEST(OutputPath, FlushRefusesALinkedDropCachesUnderTheRoot) {
  if (::geteuid() != 0) GTEST_SKIP() << "flush refuses before writing without root";
  for (const bool hard : {false, true}) {
    const test::TempDir tmp;
    test::write_text(tmp / "victim", "root-owned\n");
    const auto root = root_with_drop_caches(tmp, hard);
    const auto r = test::run_sparkops(
        {"--root", root.string(), "flush", "--state", (tmp / "state.json").string()}, kNoGpu);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(lines_in(r.err), 1u) << r.err;
    EXPECT_EQ(test::slurp(tmp / "victim"), "root-owned\n");
  }
}

TEST(OutputPath, ServeWarnsWhenItsTokenFileIsReadableByOthers) {
  const test::TempDir tmp;
  const auto token = tmp / "token";
  test::write_text(token, "s3cret\n");
  fs::create_directory(tmp / "prom");
  const std::vector<std::string> args = {"--root",     test::fixture("roots/gb10-idle").string(),
                                         "serve",      "--once",
                                         "--textfile", (tmp / "prom").string(),
                                         "--token",    token.string()};
  fs::permissions(token, fs::perms::owner_read | fs::perms::owner_write | fs::perms::others_read);
  const auto open = test::run_sparkops(args, kNoGpu);
  EXPECT_EQ(open.exit_code, 0) << open.err;
  EXPECT_NE(open.err.find("readable by every user"), std::string::npos) << open.err;
  EXPECT_NE(open.err.find("chmod 600"), std::string::npos) << open.err;
  fs::permissions(token, fs::perms::owner_read | fs::perms::owner_write);
  const auto closed = test::run_sparkops(args, kNoGpu);
  EXPECT_EQ(closed.exit_code, 0) << closed.err;
  EXPECT_EQ(closed.err.find("readable by"), std::string::npos) << closed.err;
}

}  // namespace
}  // namespace sparkops
