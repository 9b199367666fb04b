// The skill's own examples of the one-heavy-job rule (docs/serving.md "Beside").
#include <gtest/gtest.h>

#include "base/units.hpp"
#include "models/catalogue.hpp"
#include "plan/estimator.hpp"
#include "serving/beside.hpp"

namespace sparkops::serving {
namespace {

host::PoolView gb10_pool() {
  host::PoolView p;
  p.total_bytes = 130663738490ULL;  // what CUDA reports on GB10 (121.69 GiB)
  p.available_bytes = 116ULL << 30;
  p.effective_available_bytes = p.available_bytes;
  p.free_now_bytes = 110ULL << 30;
  p.overhead_bytes = 4ULL << 30;
  p.budget_bytes = p.available_bytes - p.overhead_bytes;
  return p;
}

workloads::ScanOptions options() {
  workloads::ScanOptions o;
  o.device_total_bytes = gb10_pool().total_bytes;
  return o;
}

std::uint64_t qlora_70b_need() {
  const auto* e = models::find_in_catalogue("Llama-3.1-70B");
  models::ModelShape s;
  s.name = e->name;
  s.arch = e->arch;
  s.params = models::count_params(e->arch);
  plan::RunConfig run;
  run.method = plan::Method::qlora;
  return plan::estimate(s, run).peak_pool_bytes();
}

TEST(Beside, SmallLoraCoexistsWithVllmAtHalf) {
  auto vllm = planned_job("vllm serve Qwen/Qwen3-32B --gpu-memory-utilization 0.5", std::nullopt,
                          options());
  ASSERT_TRUE(vllm.has_value()) << vllm.error().detail;
  EXPECT_FALSE(vllm->workload.heavy);
  EXPECT_EQ(vllm->workload.cap.state, workloads::CapState::capped);
  const auto job = new_training_job("8B LoRA", 3500ULL << 20, options());  // < 4 GB
  EXPECT_FALSE(job.workload.heavy);
  const auto v =
      beside_verdict(nullptr, {*vllm}, job, workloads::pool_space(gb10_pool()), options());
  EXPECT_EQ(v.verdict.kind, workloads::VerdictKind::coexists) << v.summary;
  EXPECT_TRUE(v.heavy.empty());
}

TEST(Beside, UncappedVllmAndA70bQloraDoNot) {
  auto vllm = planned_job("vllm serve Qwen/Qwen3-32B", std::nullopt, options());
  ASSERT_TRUE(vllm.has_value());
  EXPECT_TRUE(vllm->workload.heavy);  // default 0.9 of the device: near capacity, uncapped
  const std::uint64_t need = qlora_70b_need();
  EXPECT_GT(need, 30ULL << 30);
  const auto job = new_training_job("Llama-3.1-70B qlora", need, options());
  EXPECT_TRUE(job.workload.heavy);
  const auto v =
      beside_verdict(nullptr, {*vllm}, job, workloads::pool_space(gb10_pool()), options());
  EXPECT_EQ(v.verdict.kind, workloads::VerdictKind::stop_first) << v.summary;
  ASSERT_EQ(v.heavy.size(), 2u);  // the new job and vLLM: one heavy job at a time
  ASSERT_FALSE(v.cap_first.empty());
  // The cap that would make it fit: below near capacity and leaving the need beside it.
  const auto& flag = v.cap_first.front().flag;
  ASSERT_FALSE(flag.empty()) << v.cap_first.front().why;
  const double f = std::stod(flag.substr(flag.rfind(' ') + 1));
  EXPECT_LT(f, 0.7);
  EXPECT_LE(f * static_cast<double>(gb10_pool().total_bytes) + static_cast<double>(need),
            static_cast<double>(gb10_pool().total_bytes - gb10_pool().overhead_bytes));
  // Capped there, the same combination coexists (or is tight).
  auto capped = planned_job("vllm serve Qwen/Qwen3-32B " + flag, std::nullopt, options());
  ASSERT_TRUE(capped.has_value());
  const auto again =
      beside_verdict(nullptr, {*capped}, job, workloads::pool_space(gb10_pool()), options());
  EXPECT_TRUE(again.verdict.kind == workloads::VerdictKind::coexists ||
              again.verdict.kind == workloads::VerdictKind::tight)
      << again.summary;
}

// On a discrete card the combination is judged in the card's memory, as status and procs judge
// it: the planned jobs are sized on the card, fractions are of its total, no overhead is kept
// back, and the cap proposed leaves the need beside the server on the card.
TEST(Beside, OnADiscreteGpuTheCombinationIsJudgedOnTheCard) {
  const host::DeviceMemory card{0, 150754820096ULL, 140ULL << 30};  // an H200: 140.4 GiB
  const workloads::CoexistenceSpace space = workloads::gpu_space(card);
  const workloads::ScanOptions on_card = workloads::scan_options_in(options(), space);
  auto vllm = planned_job("vllm serve Qwen/Qwen3-32B", std::nullopt, on_card);
  ASSERT_TRUE(vllm.has_value());
  ASSERT_TRUE(vllm->workload.claim_bytes.has_value());
  EXPECT_EQ(*vllm->workload.claim_bytes,
            static_cast<std::uint64_t>(0.9 * static_cast<double>(card.total_bytes)));
  const std::uint64_t need = qlora_70b_need();
  const auto job = new_training_job("Llama-3.1-70B qlora", need, on_card);
  EXPECT_EQ(job.workload.gpu_bytes, need);
  const auto v = beside_verdict(nullptr, {*vllm}, job, space, on_card);
  EXPECT_EQ(v.verdict.source, host::BudgetSource::gpu_memory);
  EXPECT_EQ(v.verdict.gpu_index, 0u);
  EXPECT_EQ(v.verdict.budget_now_bytes, 140ULL << 30);
  EXPECT_EQ(v.verdict.kind, workloads::VerdictKind::stop_first) << v.summary;
  ASSERT_FALSE(v.cap_first.empty());
  const auto& flag = v.cap_first.front().flag;
  ASSERT_FALSE(flag.empty()) << v.cap_first.front().why;
  const double f = std::stod(flag.substr(flag.rfind(' ') + 1));
  EXPECT_LT(f, 0.7);
  // Of the card's total, with no overhead kept back: the need fits beside the capped server.
  EXPECT_LE(f * static_cast<double>(card.total_bytes) + static_cast<double>(need),
            static_cast<double>(card.total_bytes));
  auto capped = planned_job("vllm serve Qwen/Qwen3-32B " + flag, std::nullopt, on_card);
  ASSERT_TRUE(capped.has_value());
  const auto again = beside_verdict(nullptr, {*capped}, job, space, on_card);
  EXPECT_TRUE(again.verdict.kind == workloads::VerdictKind::coexists ||
              again.verdict.kind == workloads::VerdictKind::tight)
      << again.summary;
}

TEST(Beside, CommandsGoThroughTheProcsClassifier) {
  auto bad = planned_job("make -j8", std::nullopt, options());
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().detail.find("make -j8"), std::string::npos);
  auto empty = planned_job("   ", std::nullopt, options());
  ASSERT_FALSE(empty.has_value());
  auto ollama = planned_job("OLLAMA_MAX_LOADED_MODELS=1 ollama serve", std::nullopt, options());
  ASSERT_TRUE(ollama.has_value());
  EXPECT_EQ(ollama->workload.kind.engine, workloads::Engine::ollama);
  EXPECT_TRUE(ollama->workload.heavy);  // no byte cap and no size: heavy until sized
}

// A planned server is the job procs would see once it runs: the same engine and label as the
// classifier gives that engine's command line (trtllm-serve is "TensorRT-LLM" in both).
TEST(Beside, APlannedServerCarriesTheKindProcsGivesItRunning) {
  const std::pair<ServeEngine, const char*> engines[] = {
      {ServeEngine::vllm, "vllm serve MODEL"},
      {ServeEngine::sglang, "sglang serve --model-path MODEL"},
      {ServeEngine::ollama, "ollama serve"},
      {ServeEngine::llama_cpp, "llama-server -m MODEL.gguf"},
      {ServeEngine::trtllm, "trtllm-serve MODEL"}};
  for (const auto& [engine, command] : engines) {
    ServingPlan plan;
    plan.args.engine = engine;
    plan.footprint_bytes = 20ULL << 30;
    const auto planned = new_serving_job("the planned server", plan, options());
    const auto running = planned_job(command, std::nullopt, options());
    ASSERT_TRUE(running.has_value()) << command;
    EXPECT_EQ(planned.workload.kind.engine, running->workload.kind.engine) << command;
    EXPECT_EQ(planned.workload.kind.role, workloads::Role::server) << command;
    EXPECT_EQ(planned.workload.kind.label, running->workload.kind.label) << command;
  }
}

}  // namespace
}  // namespace sparkops::serving
