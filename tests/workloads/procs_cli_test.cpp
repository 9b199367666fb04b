#include <algorithm>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/test_support.hpp"

namespace sparkops::workloads {
namespace {

std::string root_of(const std::string& scenario) {
  return test::fixture("procs/" + scenario).string();
}
std::string apps_of(const std::string& scenario) {
  return root_of(scenario) + "/gpu-apps.csv";
}

TEST(ProcsCli, SkillExampleCoexistsTable) {
  const auto r = test::run_sparkops({"--root", root_of("vllm_capped_lora"), "procs", "--gpu-apps",
                                     apps_of("vllm_capped_lora"), "--need", "4"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  test::expect_golden("golden/procs/vllm_capped_lora_need4.txt", r.out);
}

TEST(ProcsCli, UncappedVllmAndOrphanMustStopJson) {
  const auto r =
      test::run_sparkops({"--root", root_of("vllm_uncapped_orphan"), "procs", "--gpu-apps",
                          apps_of("vllm_uncapped_orphan"), "--need", "4", "--json"});
  EXPECT_EQ(r.exit_code, 1) << r.err;  // the answer is "no, not yet"
  test::expect_golden("golden/procs/vllm_uncapped_orphan_need4.json", r.out);
}

TEST(ProcsCli, UncappedVllmAndOrphanTable) {
  const auto r = test::run_sparkops({"--root", root_of("vllm_uncapped_orphan"), "procs",
                                     "--gpu-apps", apps_of("vllm_uncapped_orphan")});
  // No question asked, but the claims (157.7 GiB) exceed the pool: oversubscription is a finding.
  EXPECT_EQ(r.exit_code, 1) << r.err;
  test::expect_golden("golden/procs/vllm_uncapped_orphan.txt", r.out);
}

// The skill example's tree with 70 GiB of overhead: vLLM's 0.5 cap claims 59.9 GiB of the 49.7 GiB
// left. Claims beyond the pool are a finding (warning, JSON field, exit 1) even with no --need, and
// the server claiming more than the pool is heavy though it holds 4.5 GiB of PSS.
TEST(ProcsCli, OversubscribedClaimsAreAFinding) {
  const std::vector<std::string> args{"--root",     root_of("vllm_capped_lora"), "procs",
                                      "--gpu-apps", apps_of("vllm_capped_lora"), "--overhead",
                                      "70"};
  const auto r = test::run_sparkops(args);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("Warning: oversubscribed: the workloads' caps and holdings claim 63.1 GiB, "
                       "13.4 GiB more than the pool (119.7 GiB total - 70.0 GiB overhead)"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("no heavy workload running"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Verdict: one heavy job at a time: stop 4242 (vLLM, near capacity: claims "
                       "59.9 GiB at gpu-memory-utilization 0.5)"),
            std::string::npos)
      << r.out;
  auto json_args = args;
  json_args.push_back("--json");
  const auto j = test::run_sparkops(json_args);
  EXPECT_EQ(j.exit_code, 1) << j.err;
  const auto doc = nlohmann::json::parse(j.out);
  EXPECT_GT(doc["verdict"]["oversubscribed_bytes"].get<std::uint64_t>(), 13ULL << 30);
  EXPECT_TRUE(doc["verdict"]["oversubscription"].is_string());
  EXPECT_TRUE(doc["workloads"][0]["heavy"].get<bool>());
  // The same tree with the default overhead: the claims fit, no finding, exit 0.
  const auto fits = test::run_sparkops({"--root", root_of("vllm_capped_lora"), "procs", "--json",
                                        "--gpu-apps", apps_of("vllm_capped_lora")});
  EXPECT_EQ(fits.exit_code, 0) << fits.err;
  EXPECT_EQ(nlohmann::json::parse(fits.out)["verdict"]["oversubscribed_bytes"], 0);
  EXPECT_TRUE(nlohmann::json::parse(fits.out)["verdict"]["oversubscription"].is_null());
}

TEST(ProcsCli, CapturedTreeWithoutGpuFileSaysSo) {
  const auto r = test::run_sparkops({"--root", root_of("ollama"), "procs"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  test::expect_golden("golden/procs/ollama.txt", r.out);
}

TEST(ProcsCli, TrainersJson) {
  const auto r = test::run_sparkops({"--root", root_of("trainers"), "procs", "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  test::expect_golden("golden/procs/trainers.json", r.out);
}

TEST(ProcsCli, BadNeedIsBadInput) {
  const auto r = test::run_sparkops({"--root", root_of("ollama"), "procs", "--need", "lots"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("sparkops: --need: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
}

TEST(ProcsCli, MissingGpuFileIsBadInput) {
  const auto r = test::run_sparkops(
      {"--root", root_of("ollama"), "procs", "--gpu-apps", "/nonexistent/apps.csv"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("sparkops: ", 0), 0u);
}

TEST(ProcsCli, VanishingPidsStillGiveAReport) {
  const auto r = test::run_sparkops({"--root", root_of("vanishing"), "procs", "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"pids_vanished\": 3"), std::string::npos);
}

}  // namespace
}  // namespace sparkops::workloads
