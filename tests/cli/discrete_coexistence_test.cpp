// On a discrete GPU a new run competes for the GPU's memory, not the host pool: status's WORKLOADS
// room, `procs --need` and `procs --plan` judge it against the same space the training budget
// comes from (host/pool.hpp training_budget), and --plan asks for the run's peak on the GPU.
//
// The tree is tests/fixtures/procs/vllm_capped_lora (a vLLM capped at gpu-memory-utilization 0.5
// and a small LoRA trainer); the GPU is the fake NVML's H200 holding those two processes'
// memory (tests/fixtures/nvml/h200-vllm-lora). On the card: total 150754820096 B, free
// 89807388672 B; vLLM claims 0.5 x total = 75377410048 B (it holds 59055800320 B), the trainer
// holds 1258291200 B, so the room once vLLM reaches its cap is
// 150754820096 - 75377410048 - 1258291200 = 74119118848 B (69.0 GiB), less than the free memory.
// The host pool would give 52 GiB (MemAvailable 56 GiB - 4 GiB overhead).

#include <cstdint>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/fake_nvml.hpp"
#include "support/test_support.hpp"

namespace sparkops {
namespace {

constexpr std::uint64_t kRoomOnGpu = 74119118848ULL;

std::string tree() {
  return test::fixture("procs/vllm_capped_lora").string();
}

TEST(DiscreteCoexistence, StatusRoomIsTheGpusMemory) {
  const auto env = test::fake_nvml_env("h200-vllm-lora");
  const auto r = test::run_sparkops({"--root", tree(), "status", "--json"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& v = j["coexistence_verdict"];
  ASSERT_TRUE(v.is_object()) << r.out;
  EXPECT_EQ(v["source"], "gpu_memory");
  EXPECT_EQ(v["gpu_index"], 0);
  EXPECT_EQ(v["room_bytes"].get<std::uint64_t>(), kRoomOnGpu);
  EXPECT_EQ(j["training_budget"]["source"], "gpu_memory");
  EXPECT_EQ(j["training_budget"]["bytes"].get<std::uint64_t>(), 89807388672ULL);
  // The sentence names the GPU beside the same figure.
  EXPECT_NE(j["coexistence"].get<std::string>().find("69.0 GiB of GPU 0's memory"),
            std::string::npos)
      << j["coexistence"];
  const auto text = test::run_sparkops({"--root", tree(), "status"}, env);
  EXPECT_NE(text.out.find("a new run can take up to 69.0 GiB of GPU 0's memory beside what is "
                          "running"),
            std::string::npos)
      << text.out;

  // Without a GPU source the same tree is judged on the pool, as before.
  const auto pool = test::run_sparkops({"--root", tree(), "status", "--json", "--gpu", "none"});
  const auto p = nlohmann::json::parse(pool.out)["coexistence_verdict"];
  EXPECT_EQ(p["source"], "unified_pool");
  EXPECT_TRUE(p["gpu_index"].is_null());
  EXPECT_NE(p["room_bytes"].get<std::uint64_t>(), kRoomOnGpu);
}

// 60 GiB: beside the capped vLLM it does not fit the host pool (52 GiB: stop vLLM first, exit 1)
// but fits the H200 with 9 GiB to spare (coexists, exit 0).
TEST(DiscreteCoexistence, ProcsNeedIsHeldAgainstTheGpu) {
  const auto env = test::fake_nvml_env("h200-vllm-lora");
  const auto r = test::run_sparkops({"--root", tree(), "procs", "--need", "60", "--json"}, env);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["verdict"]["kind"], "coexists") << j["verdict"]["summary"];
  EXPECT_EQ(j["verdict"]["source"], "gpu_memory");
  EXPECT_EQ(j["verdict"]["room_bytes"].get<std::uint64_t>(), kRoomOnGpu);
  EXPECT_EQ(j["verdict"]["budget_now_bytes"], j["training_budget"]["bytes"]);
  EXPECT_NE(j["verdict"]["summary"].get<std::string>().find("free on GPU 0 now 83.6 GiB"),
            std::string::npos)
      << j["verdict"]["summary"];

  const auto host = test::run_sparkops({"--root", tree(), "procs", "--need", "60", "--json",
                                        "--gpu-apps", tree() + "/gpu-apps.csv"});
  EXPECT_EQ(host.exit_code, 1) << host.out;
  EXPECT_EQ(nlohmann::json::parse(host.out)["verdict"]["source"], "unified_pool");

  // More than the card holds: does not fit, naming the GPU (not the pool) and not offering a
  // page-cache flush, which frees host memory.
  const auto big = test::run_sparkops({"--root", tree(), "procs", "--need", "150"}, env);
  EXPECT_EQ(big.exit_code, 1) << big.out;
  EXPECT_NE(big.out.find("exceeds GPU 0's memory (140.4 GiB)"), std::string::npos) << big.out;
  EXPECT_EQ(big.out.find("sparkops flush"), std::string::npos) << big.out;
}

// --plan asks for the run's peak on the GPU (plan's peak_bytes on a discrete card), the figure
// `plan` holds against the same budget, not its pool peak.
TEST(DiscreteCoexistence, ProcsPlanNeedsThePeakOnTheGpu) {
  const auto env = test::fake_nvml_env("h200-vllm-lora");
  const auto plan = test::run_sparkops({"--root", tree(), "plan", "--params", "7B", "--json"}, env);
  ASSERT_LT(plan.exit_code, 2) << plan.err;
  const auto p = nlohmann::json::parse(plan.out);
  ASSERT_EQ(p["budget_source"], "gpu_memory") << plan.out;
  const auto peak = p["peak_bytes"].get<std::uint64_t>();
  ASSERT_NE(peak, p["train_peak_pool_bytes"].get<std::uint64_t>());

  const auto procs =
      test::run_sparkops({"--root", tree(), "procs", "--plan", "--params", "7B", "--json"}, env);
  ASSERT_LT(procs.exit_code, 2) << procs.err;
  const auto j = nlohmann::json::parse(procs.out);
  EXPECT_EQ(j["verdict"]["need_bytes"].get<std::uint64_t>(), peak) << procs.out;
  EXPECT_EQ(j["verdict"]["source"], "gpu_memory");
}

// Several discrete GPUs (the fake NVML's H200 at index 0 and L40S at index 1): the budget is one
// card's free memory, never the sum, the first that reports memory, and status, plan and procs
// name the same card.
TEST(DiscreteCoexistence, SeveralGpusTheBudgetIsTheFirstCardsNamed) {
  const auto env = test::fake_nvml_env("two-discrete");
  const std::string root = test::fixture("roots/x86-bare").string();
  constexpr std::uint64_t kH200Free = 150121480192ULL;
  const auto status = test::run_sparkops({"--root", root, "status", "--json"}, env);
  ASSERT_EQ(status.exit_code, 0) << status.err;
  const auto s = nlohmann::json::parse(status.out);
  EXPECT_EQ(s["training_budget"]["gpu_index"], 0);
  EXPECT_EQ(s["training_budget"]["bytes"].get<std::uint64_t>(), kH200Free);
  EXPECT_EQ(s["gpu"]["devices"].size(), 2u) << status.out;
  const auto plan = test::run_sparkops({"--root", root, "plan", "--params", "7B", "--json"}, env);
  ASSERT_LT(plan.exit_code, 2) << plan.err;
  EXPECT_EQ(nlohmann::json::parse(plan.out)["budget_bytes"].get<std::uint64_t>(), kH200Free);
  const auto procs = test::run_sparkops({"--root", root, "procs", "--json"}, env);
  ASSERT_LT(procs.exit_code, 2) << procs.err;
  const auto p = nlohmann::json::parse(procs.out);
  EXPECT_EQ(p["training_budget"]["gpu_index"], 0);
  EXPECT_EQ(p["training_budget"]["bytes"].get<std::uint64_t>(), kH200Free);
  const auto text = test::run_sparkops({"--root", root, "status"}, env);
  EXPECT_NE(text.out.find("training budget 139.8 GiB: GPU 0's free memory"), std::string::npos)
      << text.out;
}

}  // namespace
}  // namespace sparkops
