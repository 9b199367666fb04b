// `sparkops plan --serve` and `--beside` end to end (docs/serving.md), against a fixture pool.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/test_support.hpp"

namespace sparkops {
namespace {

using test::run_sparkops;

std::string idle_root() {
  return test::fixture("roots/gb10-idle").string();
}

TEST(ServePlan, VllmJsonCarriesTheWorksheetAndTheClaim) {
  const auto r = run_sparkops({"--root", idle_root(), "--json", "plan", "Qwen3-32B", "--serve",
                               "vllm", "--device-total", "121.69", "--", "--max-model-len", "32768",
                               "--gpu-memory-utilization", "0.6"});
  ASSERT_LT(r.exit_code, 2) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["mode"], "serve");
  EXPECT_EQ(j["engine"], "vllm");
  EXPECT_EQ(j["kv"]["bytes_per_token"], 262144.0);
  EXPECT_EQ(j["context"], 32768);
  EXPECT_EQ(j["claim"]["kind"], "device_fraction");
  EXPECT_DOUBLE_EQ(j["claim"]["fraction"].get<double>(), 0.6);
  EXPECT_GT(j["concurrency"].get<double>(), 0.0);
  EXPECT_TRUE(j.contains("largest_context"));
}

TEST(ServePlan, BadEngineFlagsAreOneLineAndExit2) {
  const auto r = run_sparkops({"--root", idle_root(), "plan", "Qwen3-32B", "--serve", "vllm", "--",
                               "--gpu-memory-utilization", "2"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--gpu-memory-utilization"), std::string::npos) << r.err;
  const auto e = run_sparkops({"--root", idle_root(), "plan", "Qwen3-32B", "--serve", "tgi"});
  EXPECT_EQ(e.exit_code, 2);
  const auto w = run_sparkops({"--root", idle_root(), "plan", "Qwen3-32B", "--", "-c", "4096"});
  EXPECT_EQ(w.exit_code, 2);  // engine words without --serve
}

TEST(ServePlan, BesideUncappedVllmStopsA70bQlora) {
  const auto r = run_sparkops({"--root", idle_root(), "--json", "plan", "Llama-3.1-70B", "--method",
                               "qlora", "--beside", "vllm serve Qwen3-32B"},
                              {{"HF_HUB_OFFLINE", "1"}});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["beside"]["verdict"], "stop_first");
  EXPECT_EQ(j["beside"]["planned"][0]["cap_state"], "uncapped");
  const auto ok = run_sparkops({"--root", idle_root(), "--json", "plan", "Qwen3-0.6B", "--beside",
                                "vllm serve Qwen3-32B --gpu-memory-utilization 0.5"},
                               {{"HF_HUB_OFFLINE", "1"}});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(nlohmann::json::parse(ok.out)["beside"]["verdict"], "coexists");
}

}  // namespace
}  // namespace sparkops
