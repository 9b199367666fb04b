#include "gpu/subprocess.hpp"

#include <gtest/gtest.h>

#include "support/test_support.hpp"

namespace sparkops::gpu {
namespace {

using namespace std::chrono_literals;

TEST(FindOnPath, FindsTheFirstExecutable) {
  EXPECT_EQ(find_on_path("nvidia-smi", "/nonexistent:" FAKE_SMI_BIN_DIR),
            std::string(FAKE_SMI_BIN_DIR) + "/nvidia-smi");
}

TEST(FindOnPath, SkipsRelativeAndEmptyEntriesAndSlashNames) {
  EXPECT_FALSE(find_on_path("nvidia-smi", ":.:tests/gpu/fake_nvidia_smi").has_value());
  EXPECT_FALSE(find_on_path("a/b", "/usr/bin").has_value());
  EXPECT_FALSE(find_on_path("", "/usr/bin").has_value());
}

TEST(FindOnPath, IgnoresNonExecutableFiles) {
  test::TempDir dir;
  test::write_text(dir / "nvidia-smi", "#!/bin/sh\n");
  EXPECT_FALSE(find_on_path("nvidia-smi", dir.path().string()).has_value());
}

TEST(RunCaptured, CapturesBothStreamsAndExitCode) {
  auto r = run_captured({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}, 5s, 1024);
  ASSERT_TRUE(r) << r.error().detail;
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(r->out, "out\n");
  EXPECT_EQ(r->err, "err\n");
}

TEST(RunCaptured, ArgumentsAreNotInterpretedByAShell) {
  auto r = run_captured({"/bin/echo", "$(id)", ";", "x"}, 5s, 1024);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->out, "$(id) ; x\n");
}

TEST(RunCaptured, TimeoutKillsTheChild) {
  auto r = run_captured({"/bin/sleep", "30"}, 100ms, 1024);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::timed_out);
  EXPECT_NE(r.error().detail.find("timed out"), std::string::npos);
}

TEST(RunCaptured, ChildClosingItsStreamsButHangingTimesOut) {
  auto r = run_captured({"/bin/sh", "-c", "exec >&- 2>&-; sleep 30"}, 100ms, 1024);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().detail.find("timed out"), std::string::npos);
}

TEST(RunCaptured, OutputOverTheBoundIsTooLarge) {
  auto r = run_captured({"/bin/sh", "-c", "yes"}, 5s, 4096);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::too_large);
}

TEST(RunCaptured, MissingProgramIsAnError) {
  auto r = run_captured({"/nonexistent/nvidia-smi"}, 1s, 1024);
  // posix_spawn reports exec failure either as an error or as exit status 127.
  if (r) {
    EXPECT_EQ(r->exit_code, 127);
  } else {
    EXPECT_EQ(r.error().code, Errc::io);
  }
}

}  // namespace
}  // namespace sparkops::gpu
