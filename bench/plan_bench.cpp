// plan: the cost of planning a catalogue model, and of reading the headers of a 30-shard model
// directory (Llama-3.1-70B tensor names and shapes, sparse data) written with the test suite's
// safetensors writer.

#include <filesystem>
#include <fstream>
#include <random>

#include <benchmark/benchmark.h>

#include "../tests/models/safetensors_writer.hpp"
#include "../tests/plan/replay_reference.hpp"
#include "models/catalogue.hpp"
#include "models/safetensors.hpp"
#include "plan/plan.hpp"
#include "plan/plan_args.hpp"
#include "plan/reserve_model.hpp"

namespace {

using namespace sparkops;

void BM_PlanCatalogueModel(benchmark::State& state) {
  plan::PlanInput input;
  input.model.name = "Llama-3.1-70B";
  input.run.method = plan::Method::full;  // does not fit: the advice ladder runs too
  input.budget_bytes = 100ULL << 30;
  plan::PlanEnvironment env;
  env.anchors = plan::embedded_anchors();
  for (auto _ : state) {
    auto r = plan::make_plan(input, env);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_PlanCatalogueModel)->Unit(benchmark::kMicrosecond);

// The same plan as a fresh process makes it: the replay memo is emptied every iteration, so each
// plan replays every run it prints (the layer-graph cache of plan/autograd_sim stays warm).
void BM_PlanCatalogueModelCold(benchmark::State& state) {
  plan::PlanInput input;
  input.model.name = "Llama-3.1-70B";
  input.run.method = plan::Method::full;
  input.budget_bytes = 100ULL << 30;
  plan::PlanEnvironment env;
  env.anchors = plan::embedded_anchors();
  for (auto _ : state) {
    plan::clear_replay_cache();
    auto r = plan::make_plan(input, env);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_PlanCatalogueModelCold)->Unit(benchmark::kMicrosecond);

// The framework not named: the same flags under every preset, the range's two ends replayed.
void BM_PlanUnknownFramework(benchmark::State& state) {
  plan::PlanArgs args;
  args.model = "Llama-3.1-8B";
  args.budget = "100";
  auto input = plan::plan_input(args);
  if (!input) {
    state.SkipWithError("plan_input failed");
    return;
  }
  plan::PlanEnvironment env;
  env.anchors = plan::embedded_anchors();
  for (auto _ : state) {
    auto r = plan::make_plan(*input, env);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_PlanUnknownFramework)->Unit(benchmark::kMicrosecond);

void BM_EstimateOnly(benchmark::State& state) {
  const auto* e = models::find_in_catalogue("Llama-3.1-8B");
  const plan::ModelShape shape{e->name, e->arch, plan::count_params(e->arch), std::nullopt};
  const plan::RunConfig run;
  for (auto _ : state) benchmark::DoNotOptimize(plan::estimate(shape, run));
}
BENCHMARK(BM_EstimateOnly);

// The caching-allocator replay a cold plan pays once per run it prints (estimate() memoizes it):
// Llama-3.1-8B bf16 LoRA with checkpointing, packed (two steps of one shape) and with lengths
// varying (eight rising shapes), and the 80-layer Llama-3.1-70B QLoRA.
void replay_uncached(benchmark::State& state, const char* model, plan::Method method, bool packed) {
  const auto* e = models::find_in_catalogue(model);
  const plan::ModelShape shape{e->name, e->arch, plan::count_params(e->arch), std::nullopt};
  plan::RunConfig run;
  run.method = method;
  run.packed = packed;
  const plan::Estimate est = plan::estimate(shape, run);
  for (auto _ : state)
    benchmark::DoNotOptimize(plan::replay_reserve_uncached(shape, run, est.terms, est.paged_bytes));
}
void BM_ReplayUncachedLlama8BPacked(benchmark::State& state) {
  replay_uncached(state, "Llama-3.1-8B", plan::Method::lora, true);
}
void BM_ReplayUncachedLlama8BVarying(benchmark::State& state) {
  replay_uncached(state, "Llama-3.1-8B", plan::Method::lora, false);
}
void BM_ReplayUncachedLlama70BQlora(benchmark::State& state) {
  replay_uncached(state, "Llama-3.1-70B", plan::Method::qlora, true);
}
BENCHMARK(BM_ReplayUncachedLlama8BPacked)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ReplayUncachedLlama8BVarying)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ReplayUncachedLlama70BQlora)->Unit(benchmark::kMicrosecond);

// The replays alone (the step shapes built once, outside the loop): the tuned replay against
// the full replay as it stood before tuning (tests/plan/replay_reference.cpp), in one binary, so
// their ratio comes from one run.
void replay_only(benchmark::State& state, const char* model, plan::Method method, bool packed,
                 bool reference) {
  const auto* e = models::find_in_catalogue(model);
  const plan::ModelShape shape{e->name, e->arch, plan::count_params(e->arch), std::nullopt};
  plan::RunConfig run;
  run.method = method;
  run.packed = packed;
  const plan::Estimate est = plan::estimate(shape, run);
  const plan::ReplayInputs in = plan::replay_inputs(shape, run, est.terms, est.paged_bytes);
  auto replay = [&](const std::vector<plan::StepShape>& steps) {
    return reference ? plan::reference::replay_training(in.model, steps, in.config)
                     : plan::replay_training(in.model, steps, in.config);
  };
  for (auto _ : state) {
    benchmark::DoNotOptimize(replay(in.fixed));
    if (!in.varying.empty()) benchmark::DoNotOptimize(replay(in.varying));
  }
}
void BM_ReplayOnlyLlama8BPacked(benchmark::State& state, bool reference) {
  replay_only(state, "Llama-3.1-8B", plan::Method::lora, true, reference);
}
void BM_ReplayOnlyLlama8BVarying(benchmark::State& state, bool reference) {
  replay_only(state, "Llama-3.1-8B", plan::Method::lora, false, reference);
}
void BM_ReplayOnlyLlama70BQlora(benchmark::State& state, bool reference) {
  replay_only(state, "Llama-3.1-70B", plan::Method::qlora, true, reference);
}
BENCHMARK_CAPTURE(BM_ReplayOnlyLlama8BPacked, reference, true)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_ReplayOnlyLlama8BPacked, tuned, false)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_ReplayOnlyLlama8BVarying, reference, true)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_ReplayOnlyLlama8BVarying, tuned, false)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_ReplayOnlyLlama70BQlora, reference, true)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_ReplayOnlyLlama70BQlora, tuned, false)->Unit(benchmark::kMicrosecond);

class ThirtyShardDir {
 public:
  ThirtyShardDir() {
    std::random_device rd;
    dir_ = std::filesystem::temp_directory_path() / ("sparkops-plan-bench-" + std::to_string(rd()));
    const auto* e = models::find_in_catalogue("Llama-3.1-70B");
    models::testing::write_sharded_model(dir_, models::testing::llama_tensors(e->arch), 30);
    std::ofstream(dir_ / "config.json")
        << R"({"model_type":"llama","hidden_size":8192,"num_hidden_layers":80,"num_attention_heads":64,)"
           R"("num_key_value_heads":8,"intermediate_size":28672,"vocab_size":128256,"tie_word_embeddings":false})";
  }
  ~ThirtyShardDir() { std::filesystem::remove_all(dir_); }
  ThirtyShardDir(const ThirtyShardDir&) = delete;
  ThirtyShardDir& operator=(const ThirtyShardDir&) = delete;
  const std::filesystem::path& path() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

void BM_ReadThirtyShardHeaders(benchmark::State& state) {
  const ThirtyShardDir dir;
  for (auto _ : state) {
    auto m = models::read_model_dir(dir.path());
    if (!m || m->shards.size() != 30) state.SkipWithError("model dir unreadable");
    benchmark::DoNotOptimize(m);
  }
}
BENCHMARK(BM_ReadThirtyShardHeaders)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
