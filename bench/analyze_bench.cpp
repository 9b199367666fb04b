// Parse throughput of the training-log parsers on logs built from the corpus formats (in memory, so
// only parsing is measured), and the diagnosis on a long series.

#include <string>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "diagnose/diagnosis.hpp"
#include "trainlog/parse_log.hpp"

namespace {

using namespace sparkops;

std::string hf_log(int steps) {
  std::string s = "INFO:__main__:Transformers version: 4.57.6\n";
  for (int i = 1; i <= steps; ++i) {
    s += fmt::format("\r {:3}%|#         | {}/{} [{:02}:{:02}<10:00:00, 21.{:02}s/it]",
                     i * 100 / steps, i, steps, i * 21 / 60 % 60, i * 21 % 60, i % 100);
    if (i % 10 == 0)
      s += "\n{'loss': 1.2345, 'grad_norm': 0.52, 'learning_rate': 0.0002, 'epoch': 0.1}\n";
  }
  return s;
}

std::string megatron_log(int steps) {
  std::string s = "[before the start of training step] datetime: 2023-08-16 11:59:58 \n";
  for (int i = 1; i <= steps; ++i) {
    s += fmt::format(
        " iteration {:8}/  500000 | consumed samples: {:12} | elapsed time per iteration (ms): "
        "1{:03}.9 | "
        "learning rate: 7.969E-07 | global batch size:    32 | lm loss: 2.921704E+00 | loss scale: "
        "1.0 | "
        "grad norm: 2.307 | number of skipped iterations:   0 | number of nan iterations:   0 |\n",
        i, i * 32, i % 1000);
  }
  return s;
}

std::string mlx_log(int steps) {
  std::string s;
  for (int i = 1; i <= steps; ++i) {
    s += fmt::format(
        "Iter {}: Train loss 1.908, Learning Rate 2.000e-05, It/sec 1.{:03}, Tokens/sec 613.203, "
        "Trained Tokens 41886, Peak mem 9.571 GB\n",
        i * 10, i % 1000);
  }
  return s;
}

void run(benchmark::State& state, const std::string& log) {
  trainlog::ParseOptions po;
  for (auto _ : state) {
    auto s = trainlog::parse_log_text(log, po);
    benchmark::DoNotOptimize(s);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(log.size()));
}

void BM_ParseHfTqdm(benchmark::State& state) {
  run(state, hf_log(100000));
}
void BM_ParseMegatron(benchmark::State& state) {
  run(state, megatron_log(50000));
}
void BM_ParseMlxLm(benchmark::State& state) {
  run(state, mlx_log(100000));
}

void BM_DiagnoseLongSeries(benchmark::State& state) {
  trainlog::StepSeries s;
  for (int i = 1; i <= 1000000; ++i) {
    trainlog::StepRecord r;
    r.step = i;
    r.seconds = (i / 1000) % 7 == 3 ? 3.0 : 2.0;
    s.steps.push_back(r);
  }
  for (auto _ : state) {
    auto d = diagnose::diagnose(s, nullptr, diagnose::DiagnoseOptions{});
    benchmark::DoNotOptimize(d);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * 1000000);
}

BENCHMARK(BM_ParseHfTqdm)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ParseMegatron)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ParseMlxLm)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DiagnoseLongSeries)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
