// `sparkops sample` end to end: the real binary, a fixture root and the fake libnvidia-ml.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <regex>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/text.hpp"
#include "support/background_process.hpp"
#include "support/fake_nvml.hpp"
#include "support/test_support.hpp"

#ifdef FAKE_NVML_LIB

namespace sparkops {
namespace {

std::map<std::string, std::string> fake_env(std::string_view scenario = "gb10-counters-advancing") {
  auto env = test::fake_nvml_env(scenario);
  env["SPARKOPS_ROOT"] = test::fixture("roots/gb10-finetune").string();
  return env;
}

// A sampler running in the background, for signal tests (output to /dev/null).
class Background {
 public:
  Background(std::vector<std::string> args, const test::TempDir& home)
      : process_(argv_of(std::move(args)), options(home)) {}
  void signal(int sig) const { process_.signal(sig); }
  // Exit code, or 128 + signal.
  int wait() { return process_.wait(); }

 private:
  static std::vector<std::string> argv_of(std::vector<std::string> args) {
    args.insert(args.begin(), test::sparkops_binary());
    return args;
  }
  static test::BackgroundOptions options(const test::TempDir& home) {
    test::BackgroundOptions o;
    o.env = fake_env();
    o.home = home.path();
    return o;
  }
  test::BackgroundProcess process_;
};

using test::eventually;

std::size_t line_count(const std::filesystem::path& p) {
  if (!std::filesystem::exists(p)) return 0;
  const std::string text = test::slurp(p);
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

TEST(SampleCli, CountWritesHeaderRowsAndEventsFile) {
  test::TempDir dir;
  const auto out = dir / "thermal.log";
  const auto r = test::run_sparkops(
      {"sample", "--interval", "0.01", "--count", "3", "--out", out.string()}, fake_env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = test::slurp(out);
  const auto lines = split_lines(text);
  ASSERT_EQ(lines.size(), 4U);
  EXPECT_EQ(lines[0], "timestamp,temperature.gpu,power.draw");
  const std::regex row(R"(\d{4}/\d\d/\d\d \d\d:\d\d:\d\d\.\d{3}, 81, 11\.17 W)");
  for (std::size_t i = 1; i < lines.size(); ++i)
    EXPECT_TRUE(std::regex_match(std::string(lines[i]), row)) << lines[i];
  const std::string events = test::slurp(dir / "thermal.log.events");
  EXPECT_NE(events.find("start cause=sw_thermal gpu=0"), std::string::npos) << events;
  EXPECT_NE(r.err.find("sparkops: event "), std::string::npos);
}

TEST(SampleCli, SecondRunAppendsUnderTheSameHeader) {
  test::TempDir dir;
  const auto out = (dir / "x.csv").string();
  const std::vector<std::string> args{"sample",   "--interval", "10ms",  "--count", "2",
                                      "--format", "extended",   "--out", out};
  ASSERT_EQ(test::run_sparkops(args, fake_env()).exit_code, 0);
  ASSERT_EQ(test::run_sparkops(args, fake_env()).exit_code, 0);
  const std::string text = test::slurp(out);
  const auto lines = split_lines(text);
  ASSERT_EQ(lines.size(), 7U);  // comment, header, 2 rows, restart comment, 2 rows
  EXPECT_TRUE(starts_with(lines[0], "# sparkops "));
  EXPECT_TRUE(starts_with(lines[1], "timestamp_utc,gpu_index,"));
  EXPECT_TRUE(starts_with(lines[4], "# sparkops "));
}

TEST(SampleCli, DifferentFormatOnAnExistingFileIsRefused) {
  test::TempDir dir;
  const auto out = (dir / "thermal.log").string();
  ASSERT_EQ(
      test::run_sparkops({"sample", "--interval", "0.01", "--count", "1", "--out", out}, fake_env())
          .exit_code,
      0);
  const std::string before = test::slurp(out);
  const auto r =
      test::run_sparkops({"sample", "--count", "1", "--format", "jsonl", "--out", out}, fake_env());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("different header"), std::string::npos) << r.err;
  EXPECT_EQ(test::slurp(out), before);
}

TEST(SampleCli, BadFlagsAreOneLineAndExitTwo) {
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"sample", "--interval", "soon"},
                                             {"sample", "--format", "csv"},
                                             {"sample", "--count", "2", "--duration", "1m"}}) {
    const auto r = test::run_sparkops(args, fake_env());
    EXPECT_EQ(r.exit_code, 2) << args[1];
    EXPECT_TRUE(starts_with(r.err, "sparkops: ")) << r.err;
  }
}

TEST(SampleCli, JsonlRowsParseAndJsonSummaryCounts) {
  test::TempDir dir;
  const auto out = dir / "s.jsonl";
  const auto r = test::run_sparkops({"sample", "--interval", "0.01", "--count", "2", "--format",
                                     "jsonl", "--out", out.string(), "--json"},
                                    fake_env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto summary = nlohmann::json::parse(r.out);
  EXPECT_EQ(summary["rows"], 2);
  const std::string text = test::slurp(out);
  for (auto line : split_lines(text)) {
    const auto j = nlohmann::json::parse(line);
    EXPECT_EQ(j["gpu_temp_c"], 81);
  }
}

TEST(SampleCli, SigtermStopsCleanlyAndSighupReopensTheFile) {
  test::TempDir dir;
  const auto out = dir / "thermal.log";
  Background bg({"sample", "--interval", "0.01", "--out", out.string()}, dir);
  ASSERT_TRUE(eventually([&] { return line_count(out) >= 3; }));
  std::filesystem::rename(out, dir / "thermal.log.1");
  bg.signal(SIGHUP);
  ASSERT_TRUE(eventually([&] { return line_count(out) >= 2; })) << "no new file after SIGHUP";
  bg.signal(SIGTERM);
  EXPECT_EQ(bg.wait(), 0);
  EXPECT_TRUE(starts_with(test::slurp(out), "timestamp,temperature.gpu,power.draw\n"));
  EXPECT_TRUE(
      starts_with(test::slurp(dir / "thermal.log.1"), "timestamp,temperature.gpu,power.draw\n"));
  EXPECT_NE(test::slurp(dir / "thermal.log.events").find("reason=sampler_stopped"),
            std::string::npos);
}

// SIGKILL at random moments, many times, appending to the same file: every row that was complete
// before a kill is still there after it, and every line of the file is a whole row.
TEST(SampleCli, SigkillAtRandomMomentsLosesNoCompletedRow) {
  test::TempDir dir;
  const auto out = dir / "thermal.log";
  const std::regex row(R"(\d{4}/\d\d/\d\d \d\d:\d\d:\d\d\.\d{3}, 81, 11\.17 W)");
  std::mt19937 rng(12345);
  std::uniform_int_distribution<int> delay_ms(0, 40);
  constexpr std::string_view kTorn = "2025/11/09 09:26:42.345, 8";
  std::string previous;
  for (int i = 0; i < 30; ++i) {
    if (i == 15) {
      // A power cut mid-row (which one write() per row and SIGKILL cannot produce): the next run
      // must cut it and carry on.
      test::write_text(out, previous + std::string(kTorn));
    }
    {
      Background bg({"sample", "--interval", "0.002", "--out", out.string()}, dir);
      // Once this run has appended something, kill it at a random moment.
      ASSERT_TRUE(eventually([&] {
        std::error_code ec;
        const auto size = std::filesystem::file_size(out, ec);
        return !ec && size > previous.size() + (i == 15 ? kTorn.size() : 0) &&
               test::slurp(out).back() == '\n';
      })) << "iteration "
          << i << ": the sampler wrote nothing";
      std::this_thread::sleep_for(std::chrono::milliseconds{delay_ms(rng)});
      bg.signal(SIGKILL);
      EXPECT_EQ(bg.wait(), 128 + SIGKILL);
    }
    const std::string now = test::slurp(out);
    ASSERT_TRUE(starts_with(now, previous))
        << "iteration " << i << ": rows written before the kill changed";
    ASSERT_EQ(now.back(), '\n') << "iteration " << i << ": the file ends in a partial line";
    const auto lines = split_lines(now);
    ASSERT_EQ(lines[0], "timestamp,temperature.gpu,power.draw");
    for (std::size_t k = 1; k < lines.size(); ++k) {
      ASSERT_TRUE(std::regex_match(std::string(lines[k]), row))
          << "iteration " << i << " line " << k << ": " << lines[k];
    }
    ASSERT_GT(now.size(), previous.size());
    previous = now;
  }
  EXPECT_EQ(test::slurp(out).back(), '\n');
}

}  // namespace
}  // namespace sparkops

#endif
