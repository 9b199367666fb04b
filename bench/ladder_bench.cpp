// OOM classifier throughput: a training log with an OOM at the end, and one endless line.
// Run: build/<dir>/bench/ladder_bench (Release build for figures).

#include <string>

#include <benchmark/benchmark.h>

#include "ladder/oom_classifier.hpp"

namespace {

std::string training_log(std::size_t bytes) {
  const std::string line =
      "{'loss': 1.234, 'grad_norm': 0.5, 'learning_rate': 2e-05, 'epoch': 0.01}\n"
      " 12%|#2        | 120/1000 [02:24<17:36,  1.20s/it]\r"
      "[2025-11-09 09:26:12,345] [INFO] [axolotl.train:123] [PID:4242] [RANK:0] step done\n";
  std::string text;
  while (text.size() < bytes) text += line;
  text += "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB.\n";
  return text;
}

void BM_ClassifyTrainingLog(benchmark::State& state) {
  const auto text = training_log(16 * 1024 * 1024);
  for (auto _ : state) {
    auto r = sparkops::ladder::classify_oom_text(text);
    benchmark::DoNotOptimize(r);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(text.size()));
}
BENCHMARK(BM_ClassifyTrainingLog)->Unit(benchmark::kMillisecond);

void BM_ClassifyEndlessLine(benchmark::State& state) {
  const std::string text(16 * 1024 * 1024, 'x');
  for (auto _ : state) {
    auto r = sparkops::ladder::classify_oom_text(text);
    benchmark::DoNotOptimize(r);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(text.size()));
}
BENCHMARK(BM_ClassifyEndlessLine)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
