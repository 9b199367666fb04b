// Long work shows progress on a terminal and nothing elsewhere: the one reporter
// (cli/progress_line.hpp) on a ManualClock, and analyze / oom under a real pseudo-terminal
// (script(1), as the watch tests use) against the same commands on a pipe.

#include <cstdio>
#include <filesystem>

#include <gtest/gtest.h>

#include "base/clock.hpp"
#include "cli/hub_progress.hpp"
#include "cli/progress_line.hpp"
#include "support/test_support.hpp"

namespace sparkops {
namespace {

using namespace std::chrono_literals;

constexpr std::string_view kClear = "\x1b[K";

// Everything written to a FILE* so far.
std::string contents(std::FILE* f) {
  std::fflush(f);
  std::string out;
  std::rewind(f);
  char buf[4096];
  while (const auto n = std::fread(buf, 1, sizeof buf, f)) out.append(buf, n);
  std::fseek(f, 0, SEEK_END);
  return out;
}

struct TmpFile {
  std::FILE* f = std::tmpfile();
  ~TmpFile() { std::fclose(f); }
};

TEST(ProgressLine, DrawsAtMostTenTimesASecondAndClearsAtTheEnd) {
  TmpFile out;
  ManualClock clock;
  {
    cli::ProgressLine line(out.f, true, "train.log", 1000ULL << 20, clock);
    line.update(0);  // the first update draws
    EXPECT_EQ(contents(out.f), "\rtrain.log: 0 B of 1000.0 MiB (0%)" + std::string(kClear));
    clock.advance(50ms);
    line.update(100ULL << 20);  // within 100 ms: not redrawn
    EXPECT_EQ(contents(out.f).find("100.0 MiB"), std::string::npos);
    clock.advance(50ms);
    line.update(100ULL << 20);  // 100 ms after the last draw: 100 MiB in 0.1 s
    EXPECT_NE(contents(out.f).find("\rtrain.log: 100.0 MiB of 1000.0 MiB (10%), 1000.0 MiB/s, "
                                   "0.9s left" +
                                   std::string(kClear)),
              std::string::npos)
        << contents(out.f);
  }
  const std::string all = contents(out.f);
  EXPECT_EQ(all.substr(all.size() - 1 - kClear.size()), "\r" + std::string(kClear));
}

TEST(ProgressLine, DisabledWritesNothing) {
  TmpFile out;
  ManualClock clock;
  {
    cli::ProgressLine line(out.f, false, "train.log", 1000, clock);
    line.update(10);
    clock.advance(1s);
    line.update(500);
    line.finish();
  }
  EXPECT_EQ(contents(out.f), "");
}

TEST(ProgressLine, WithoutATotalShowsBytesAndRate) {
  TmpFile out;
  ManualClock clock;
  cli::ProgressLine line(out.f, true, "stdin", std::nullopt, clock);
  EXPECT_EQ(line.text(3ULL << 20, 2s), "stdin: 3.0 MiB, 1.5 MiB/s");
  EXPECT_EQ(line.text(0, 0s), "stdin: 0 B");
}

class FakeHttp final : public models::HttpClient {
 public:
  Result<models::HttpResponse> get(const models::HttpRequest&) const override {
    return models::HttpResponse{200, {}, std::string(2048, 'x')};
  }
};

TEST(ProgressLine, HubFetchReportsEveryAnswer) {
  TmpFile out;
  ManualClock clock;
  cli::ProgressLine line(out.f, true, "reading org/model from the Hub", std::nullopt, clock);
  const FakeHttp inner;
  const cli::ProgressHttpClient client(inner, line);
  ASSERT_TRUE(client.get({}));
  clock.advance(200ms);
  ASSERT_TRUE(client.get({}));
  const std::string text = contents(out.f);
  EXPECT_NE(text.find("\rreading org/model from the Hub: 0 B"), std::string::npos) << text;
  // The first answer came within 100 ms of the first draw: it shows with the second request.
  EXPECT_NE(text.find("\rreading org/model from the Hub: 2.0 KiB"), std::string::npos) << text;
}

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
