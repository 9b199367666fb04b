#include <algorithm>

#include <gtest/gtest.h>

#include "support/test_support.hpp"

namespace sparkops {
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
  EXPECT_EQ(r.exit_code, 0) << r.err;  // no question asked: a report, not a refusal
  test::expect_golden("golden/procs/vllm_uncapped_orphan.txt", r.out);
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
}  // namespace sparkops
