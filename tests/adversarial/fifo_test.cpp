// A FIFO planted inside a --root tree (docs/reliability.md "Numbers and files"): every reader opens
// without blocking and refuses what is not a regular file, so `status` and `sample` finish. Each
// run is bounded by timeout(1): exit 124 is the hang this test exists to catch.
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "base/file_io.hpp"
#include "base/held_file.hpp"
#include "support/test_support.hpp"

namespace sparkops {
namespace {

namespace fs = std::filesystem;

// A copy of gb10-finetune whose PSI, a hwmon input and the kernel log file are FIFOs no one writes.
fs::path root_with_fifos(const test::TempDir& tmp) {
  const auto root = tmp / "root";
  fs::copy(test::fixture("roots/gb10-finetune"), root, fs::copy_options::recursive);
  for (const char* rel :
       {"proc/pressure/memory", "sys/class/hwmon/hwmon0/temp1_input", "var/log/kern.log"}) {
    fs::create_directories((root / rel).parent_path());
    fs::remove(root / rel);
    EXPECT_EQ(::mkfifo((root / rel).c_str(), 0644), 0) << rel;
  }
  return root;
}

test::ProcessResult run_bounded(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"/usr/bin/timeout", "60", test::sparkops_binary()};
  argv.insert(argv.end(), args.begin(), args.end());
  return test::run_process(argv, {{"SPARKOPS_GPU_BACKEND", "none"}});
}

TEST(Fifo, StatusFinishesWithAFifoInTheRoot) {
  const test::TempDir tmp;
  const auto root = root_with_fifos(tmp);
  const auto r = run_bounded({"--root", root.string(), "status", "--json"});
  ASSERT_NE(r.exit_code, 124) << "status hung on a FIFO";
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"pool\""), std::string::npos);
}

TEST(Fifo, SampleFinishesWithAFifoInTheRoot) {
  const test::TempDir tmp;
  const auto root = root_with_fifos(tmp);
  const auto r = run_bounded({"--root", root.string(), "sample", "--count", "2", "--interval",
                              "0.01", "--out", (tmp / "t.csv").string()});
  ASSERT_NE(r.exit_code, 124) << "sample hung on a FIFO";
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(Fifo, ReadersRefuseNonRegularFilesWithoutBlocking) {
  const test::TempDir tmp;
  const auto fifo = tmp / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  const auto text = read_file(fifo);
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error().code, Errc::invalid_argument);
  EXPECT_NE(text.error().detail.find("FIFO"), std::string::npos) << text.error().detail;
  const auto held = HeldFile::open(fifo);
  ASSERT_FALSE(held);
  EXPECT_EQ(held.error().code, Errc::invalid_argument);
  const auto dir = read_file(tmp.path());
  ASSERT_FALSE(dir);
  EXPECT_EQ(dir.error().code, Errc::io);
}

}  // namespace
}  // namespace sparkops
