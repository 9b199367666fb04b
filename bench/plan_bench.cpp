// plan: the cost of planning a catalogue model, and of reading the headers of a 30-shard model
// directory (Llama-3.1-70B tensor names and shapes, sparse data) written with the test suite's
// safetensors writer.

#include <filesystem>
#include <fstream>
#include <random>

#include <benchmark/benchmark.h>

#include "../tests/models/safetensors_writer.hpp"
#include "models/catalogue.hpp"
#include "models/safetensors.hpp"
#include "plan/plan.hpp"

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

void BM_EstimateOnly(benchmark::State& state) {
  const auto* e = models::find_in_catalogue("Llama-3.1-8B");
  const plan::ModelShape shape{e->name, e->arch, plan::count_params(e->arch), std::nullopt};
  const plan::RunConfig run;
  for (auto _ : state) benchmark::DoNotOptimize(plan::estimate(shape, run));
}
BENCHMARK(BM_EstimateOnly);

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
