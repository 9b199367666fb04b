// On a discrete GPU every command that judges a new job beside others judges it in the same
// space: `plan --beside-running`, `plan --beside`, `procs --plan` and watch's pre-flight give the
// room status gives (the card's memory, workloads sized by what they hold on it), and "heavy"
// counts what takes the card's memory, not a CPU-only job's RSS.
//
// Trees and cards: tests/fixtures/procs/vllm_capped_lora on the fake NVML's H200 holding its two
// processes (nvml/h200-vllm-lora: room on the card 74119118848 B, see
// discrete_coexistence_test.cpp), and tests/fixtures/procs/trainers on the H200 holding that
// tree's GPU processes (nvml/h200-trainers).

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/fake_nvml.hpp"
#include "support/test_support.hpp"

namespace sparkops {
namespace {

constexpr std::uint64_t kRoomOnGpu = 74119118848ULL;
constexpr std::uint64_t kH200Total = 150754820096ULL;

std::string lora_tree() {
  return test::fixture("procs/vllm_capped_lora").string();
}

nlohmann::json json_of(const test::ProcessResult& r) {
  EXPECT_LT(r.exit_code, 2) << r.out << r.err;
  return nlohmann::json::parse(r.out);
}

// `plan --beside-running` judges the planned run's peak on the card (the plan's own budget basis)
// in the card's memory, beside the running workloads sized on the card: the room status and
// `procs --plan` give. Without a GPU source the same tree is judged on the pool.
TEST(DiscreteBeside, PlanBesideRunningGivesStatusRoom) {
  const auto env = test::fake_nvml_env("h200-vllm-lora");
  const auto plan = json_of(test::run_sparkops(
      {"--root", lora_tree(), "plan", "--params", "7B", "--beside-running", "--json"}, env));
  ASSERT_EQ(plan["budget_source"], "gpu_memory") << plan.dump();
  const auto& beside = plan["beside"];
  ASSERT_TRUE(beside.is_object()) << plan.dump();
  EXPECT_EQ(beside["source"], "gpu_memory");
  EXPECT_EQ(beside["gpu_index"], 0);
  EXPECT_EQ(beside["need_bytes"], plan["peak_bytes"]);
  EXPECT_EQ(beside["room_bytes"].get<std::uint64_t>(), kRoomOnGpu);
  EXPECT_NE(beside["summary"].get<std::string>().find("free on GPU 0 now 83.6 GiB"),
            std::string::npos)
      << beside["summary"];

  const auto status = json_of(test::run_sparkops({"--root", lora_tree(), "status", "--json"}, env));
  EXPECT_EQ(status["coexistence_verdict"]["room_bytes"], beside["room_bytes"]);
  const auto procs = json_of(test::run_sparkops(
      {"--root", lora_tree(), "procs", "--plan", "--params", "7B", "--json"}, env));
  EXPECT_EQ(procs["verdict"]["room_bytes"], beside["room_bytes"]);
  EXPECT_EQ(procs["verdict"]["need_bytes"], beside["need_bytes"]);

  const auto pool = json_of(test::run_sparkops({"--root", lora_tree(), "--gpu", "none", "plan",
                                                "--params", "7B", "--beside-running", "--json"}));
  EXPECT_EQ(pool["beside"]["source"], "unified_pool");
  EXPECT_TRUE(pool["beside"]["gpu_index"].is_null());
  EXPECT_NE(pool["beside"]["room_bytes"].get<std::uint64_t>(), kRoomOnGpu);
}

// A planned vLLM at 0.5 of the card beside the running one at 0.5: the two claims take the whole
// card (fractions of its total, 140.4 GiB, not of the host's 119.7 GiB), so there is no room for
// the run and the verdict names the GPU.
TEST(DiscreteBeside, PlanBesideClaimsAreFractionsOfTheCard) {
  const auto env = test::fake_nvml_env("h200-vllm-lora");
  const auto r = test::run_sparkops(
      {"--root", lora_tree(), "plan", "--params", "7B", "--beside",
       "vllm serve Qwen/Qwen3-8B --gpu-memory-utilization 0.5", "--beside-running", "--json"},
      env);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& beside = j["beside"];
  EXPECT_EQ(beside["source"], "gpu_memory");
  ASSERT_EQ(beside["planned"].size(), 1u);
  EXPECT_GE(beside["planned"][0]["reserved_bytes"].get<std::uint64_t>(), kH200Total / 2);
  EXPECT_EQ(beside["room_bytes"].get<std::uint64_t>(), 0u) << beside["summary"];
  EXPECT_NE(beside["verdict"], "coexists");
}

// `procs --plan MODEL --serve ENGINE` asks for the server's footprint on the card, the figure
// `plan --serve` gives on the same machine: its fractions are of the card's total.
TEST(DiscreteBeside, ProcsPlanServeIsSizedOnTheCard) {
  const auto env = test::fake_nvml_env("h200-vllm-lora");
  const auto serve = json_of(test::run_sparkops(
      {"--root", lora_tree(), "plan", "Qwen3-0.6B", "--serve", "vllm", "--json"}, env));
  EXPECT_EQ(serve["device_total_bytes"].get<std::uint64_t>(), kH200Total) << serve.dump();
  EXPECT_EQ(serve["budget_bytes"].get<std::uint64_t>(), 89807388672ULL);  // free on the card
  const auto procs = json_of(test::run_sparkops(
      {"--root", lora_tree(), "procs", "--plan", "Qwen3-0.6B", "--serve", "vllm", "--json"}, env));
  EXPECT_EQ(procs["verdict"]["need_bytes"], serve["footprint_bytes"]) << procs.dump();
  EXPECT_EQ(procs["verdict"]["source"], "gpu_memory");

  const auto pool = json_of(test::run_sparkops(
      {"--root", lora_tree(), "--gpu", "none", "plan", "Qwen3-0.6B", "--serve", "vllm", "--json"}));
  EXPECT_NE(pool["device_total_bytes"], serve["device_total_bytes"]);
}

// The serving worksheet says where the footprint lives: on the card when it is sized there, in
// the pool when there is no discrete GPU.
TEST(DiscreteBeside, ServingTextSaysTheFootprintIsOnTheGpu) {
  const auto env = test::fake_nvml_env("h200-vllm-lora");
  const auto card =
      test::run_sparkops({"--root", lora_tree(), "plan", "Qwen3-0.6B", "--serve", "vllm"}, env);
  EXPECT_NE(card.out.find(" on the GPU; up to "), std::string::npos) << card.out;
  EXPECT_EQ(card.out.find("in the pool"), std::string::npos) << card.out;
  const auto pool = test::run_sparkops(
      {"--root", lora_tree(), "--gpu", "none", "plan", "Qwen3-0.6B", "--serve", "vllm"});
  EXPECT_NE(pool.out.find(" in the pool; up to "), std::string::npos) << pool.out;
}

// watch's pre-flight with --beside judges in the card's memory too, and refuses the launch the
// verdict says must wait (the two claims above leave no room), naming the GPU.
TEST(DiscreteBeside, WatchPreflightBesideJudgesTheCard) {
  test::TempDir dir;
  const auto env = test::fake_nvml_env("h200-vllm-lora");
  const auto r = test::run_sparkops({"--root", lora_tree(), "watch", "--params", "7B", "--beside",
                                     "vllm serve Qwen/Qwen3-8B --gpu-memory-utilization 0.5",
                                     "--dir", (dir.path() / "run").string(), "--", "true"},
                                    env);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("verdict: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("free on GPU 0 now"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("not launching"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "run" / "summary.json"));
}

// The trainers tree: torchrun's four ranks hold 4 GiB each on the card and the DeepSpeed worker
// 7000 MiB; llama-2's example under torchrun (PID 3200, 13 GiB RSS), llama.cpp's finetune (3600,
// 4.4 GiB) and train_evo2 (3700, 5 GiB) hold nothing on it. On the card those three are small;
// judged on the pool (the tree's captured nvidia-smi file, no card memory) they are heavy.
TEST(DiscreteBeside, HeavyOnTheCardCountsGpuMemoryNotRss) {
  const std::string tree = test::fixture("procs/trainers").string();
  const auto heavy_of = [](const nlohmann::json& procs) {
    std::vector<std::uint32_t> heavy;
    for (const auto& w : procs["workloads"])
      if (w["heavy"].get<bool>()) heavy.push_back(w["pid"].get<std::uint32_t>());
    return heavy;
  };
  const auto card = json_of(test::run_sparkops({"--root", tree, "procs", "--json"},
                                               test::fake_nvml_env("h200-trainers")));
  ASSERT_EQ(card["training_budget"]["source"], "gpu_memory") << card.dump();
  const auto on_card = heavy_of(card);
  EXPECT_EQ(on_card, (std::vector<std::uint32_t>{3000, 3100})) << card["verdict"]["summary"];
  for (const auto& w : card["workloads"]) {
    if (w["pid"] == 3000) {
      EXPECT_EQ(w["heavy_reason"], "uncapped: holds 16.0 GiB on the GPU");
    }
  }
  const auto pool = json_of(test::run_sparkops(
      {"--root", tree, "procs", "--json", "--gpu-apps", tree + "/gpu-apps.csv"}));
  const auto on_pool = heavy_of(pool);
  for (const std::uint32_t pid : {3200u, 3600u, 3700u}) {
    EXPECT_NE(std::find(on_pool.begin(), on_pool.end(), pid), on_pool.end()) << pid;
  }
  // The stop list of a question on the card names only the two that hold the card's memory.
  const auto need = test::run_sparkops({"--root", tree, "procs", "--need", "10", "--json"},
                                       test::fake_nvml_env("h200-trainers"));
  EXPECT_EQ(need.exit_code, 1) << need.out;
  const auto v = nlohmann::json::parse(need.out)["verdict"];
  EXPECT_EQ(v["heavy_count"], 2);
  std::vector<std::uint32_t> stop;
  for (const auto& s : v["stop"]) stop.push_back(s["pid"].get<std::uint32_t>());
  std::sort(stop.begin(), stop.end());
  EXPECT_EQ(stop, (std::vector<std::uint32_t>{3000, 3100})) << v["summary"];
}

}  // namespace
}  // namespace sparkops
