// Long work shows progress on a terminal and nothing elsewhere: analyze / oom under a real
// pseudo-terminal (script(1), as the watch tests use) against the same commands on a pipe. The
// reporter itself is pinned on a ManualClock in tests/term/progress_line_test.cpp.

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "support/test_support.hpp"

namespace sparkops {
namespace {

constexpr std::string_view kClear = "\x1b[K";

bool have_script() {
  return std::filesystem::exists("/usr/bin/script");
}

// The command with stdout to a file and stderr on a pseudo-terminal; returns what the terminal
// showed.
test::ProcessResult on_a_terminal(const std::vector<std::string>& args,
                                  const std::filesystem::path& stdout_file) {
  std::string cmd = "'" + test::sparkops_binary() + "'";
  for (const auto& a : args) cmd += " '" + a + "'";
  cmd += " >'" + stdout_file.string() + "'";
  return test::run_process({"/usr/bin/script", "-qec", cmd, "/dev/null"});
}

const std::string kLog = "logs/hf_trainer_qlora_qwen3-8b_rtx5000ada_nohup.log";

TEST(ProgressCli, AnalyzeDrawsOnATerminalAndClearsTheLine) {
  if (!have_script()) GTEST_SKIP() << "needs script(1)";
  test::TempDir dir;
  const std::string log = test::fixture(kLog).string();
  const auto r = on_a_terminal({"analyze", "--log", log}, dir / "out.txt");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("\r" + log + ": "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" of "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(kClear), std::string::npos) << r.out;
  // The answer on stdout is the same as on a pipe: progress never reaches it.
  const auto piped = test::run_sparkops({"analyze", "--log", log});
  EXPECT_EQ(test::slurp(dir / "out.txt"), piped.out);
  EXPECT_EQ(piped.err, "");  // stderr a pipe: nothing
}

TEST(ProgressCli, QuietSilencesItAnywhereOnTheLine) {
  if (!have_script()) GTEST_SKIP() << "needs script(1)";
  test::TempDir dir;
  const std::string log = test::fixture(kLog).string();
  const auto before = on_a_terminal({"--quiet", "analyze", "--log", log}, dir / "a.txt");
  const auto after = on_a_terminal({"analyze", "--log", log, "--quiet"}, dir / "b.txt");
  for (const auto* r : {&before, &after}) {
    EXPECT_EQ(r->exit_code, 0) << r->out;
    EXPECT_EQ(r->out.find(kClear), std::string::npos) << r->out;
    EXPECT_EQ(r->out, "");
  }
}

TEST(ProgressCli, OomDrawsOnATerminalNotOnAPipe) {
  if (!have_script()) GTEST_SKIP() << "needs script(1)";
  test::TempDir dir;
  const std::string log =
      test::fixture("oom/corpus/hf_from_pretrained_load_oom_during_checkpoint_shards_gemma3.txt")
          .string();
  const std::string root = test::fixture("roots/gb10-idle").string();
  const auto r = on_a_terminal({"--root", root, "oom", "--log", log}, dir / "out.txt");
  EXPECT_NE(r.out.find("\r" + log + ": "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(kClear), std::string::npos) << r.out;
  const auto piped = test::run_sparkops({"--root", root, "oom", "--log", log});
  EXPECT_EQ(piped.err, "");
  EXPECT_EQ(test::slurp(dir / "out.txt"), piped.out);
}

}  // namespace
}  // namespace sparkops
