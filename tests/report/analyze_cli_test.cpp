// `sparkops analyze` end to end: text and JSON on a corpus log, the HTML file, and bad input
// answered with one line on stderr and exit code 2.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "report/report_fixture.hpp"
#include "support/test_support.hpp"

namespace sparkops {
namespace {

TEST(AnalyzeCli, JsonOnMegatronCorpusLog) {
  const auto r = test::run_sparkops(
      {"analyze", "--log", test::fixture("logs/megatron-lm_gpt2-345m_8gpu_iterations.log").string(),
       "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["format"], "megatron");
  EXPECT_EQ(j["steps"], 40);
  EXPECT_EQ(j["first_step"], 1);
  EXPECT_EQ(j["last_step"], 40);
  EXPECT_NEAR(j["median_step_seconds"].get<double>(), 1.2997, 1e-4);
  EXPECT_TRUE(j["slowdowns"].is_array());
  EXPECT_TRUE(j["pauses"].is_array());
}

TEST(AnalyzeCli, SyntheticRunTextSummaryAndHtml) {
  const auto run = test::analysed_run();
  test::TempDir dir;
  test::write_text(dir / "train.log", run.trace.log);
  test::write_text(dir / "thermal.csv", run.trace.extended_csv);
  const auto r =
      test::run_sparkops({"analyze", "--log", (dir / "train.log").string(), "--thermal",
                          (dir / "thermal.csv").string(), "--start", "2025-11-09T09:26:12Z",
                          "--html", (dir / "report.html").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Slowdowns  2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("slowdown_start step="), std::string::npos);
  EXPECT_NE(r.out.find("cause=thermal"), std::string::npos);
  EXPECT_NE(r.out.find("cause=contention"), std::string::npos);
  EXPECT_NE(r.out.find(" eval step=200 duration=60.0s"), std::string::npos);
  EXPECT_NE(r.out.find(" checkpoint step=250"), std::string::npos);
  EXPECT_GT(test::slurp(dir / "report.html").size(), 50000u);
}

TEST(AnalyzeCli, BadInputIsOneLineAndExitTwo) {
  test::TempDir dir;
  test::write_text(dir / "empty.log", "");
  test::write_text(dir / "other.csv", "name,value\nfoo,1\n");
  const std::string corpus =
      test::fixture("logs/mlx_lm_lora_ministral3b_macbook_500iters.log").string();
  const std::vector<std::vector<std::string>> cases = {
      {"analyze", "--log", (dir / "empty.log").string()},
      {"analyze", "--log", (dir / "missing.log").string()},
      {"analyze", "--log", corpus, "--thermal", (dir / "other.csv").string()},
      {"analyze", "--log", corpus, "--format", "nope"},
      {"analyze", "--log", corpus, "--start", "yesterday"},
      {"analyze", "--log", corpus, "--tz-offset", "+99:00"},
  };
  for (const auto& args : cases) {
    const auto r = test::run_sparkops(args);
    EXPECT_EQ(r.exit_code, 2) << args.back();
    EXPECT_EQ(r.err.rfind("sparkops: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

}  // namespace
}  // namespace sparkops
