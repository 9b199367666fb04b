// GPU layer micro-benchmarks: the nvidia-smi parsers on real outputs, and one NVML snapshot through
// the fake libnvidia-ml (the dlopen path, symbol calls and unit conversion; not a real driver).

#include <stdlib.h>

#include <fstream>
#include <sstream>
#include <string>

#include <benchmark/benchmark.h>

#include "gpu/nvml_source.hpp"
#include "gpu/smi_parse.hpp"

namespace {

std::string read(const std::string& rel) {
  std::ifstream in(std::string(SPARKOPS_BENCH_SOURCE_DIR) + "/tests/fixtures/" + rel);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void BM_ParseQueryGpuRow(benchmark::State& state) {
  const std::string text = read("nvidia-smi/replay/gb10/query-gpu.csv");
  for (auto _ : state) {
    auto recs = sparkops::gpu::parse_smi_query_gpu(text, sparkops::gpu::kSmiQueryGpuFields);
    benchmark::DoNotOptimize(recs);
  }
}
BENCHMARK(BM_ParseQueryGpuRow);

void BM_ParseSmiQ(benchmark::State& state) {
  const std::string text = read("nvidia-smi/replay/gb10/q.txt");
  for (auto _ : state) {
    auto q = sparkops::gpu::parse_smi_q(text);
    benchmark::DoNotOptimize(q);
  }
}
BENCHMARK(BM_ParseSmiQ);

void BM_ParseSmiTable(benchmark::State& state) {
  const std::string text = read("nvidia-smi/replay/gb10/table.txt");
  for (auto _ : state) {
    auto t = sparkops::gpu::parse_smi_table(text);
    benchmark::DoNotOptimize(t);
  }
}
BENCHMARK(BM_ParseSmiTable);

void BM_NvmlSnapshotFakeGb10(benchmark::State& state) {
  const std::string scenario = std::string(SPARKOPS_BENCH_SOURCE_DIR) + "/tests/fixtures/nvml/gb10";
  ::setenv("FAKE_NVML_SCENARIO", scenario.c_str(), 1);
  auto src = sparkops::gpu::make_nvml_gpu_source(SPARKOPS_BENCH_FAKE_NVML);
  for (auto _ : state) {
    auto snap = src->snapshot();
    benchmark::DoNotOptimize(snap);
  }
}
BENCHMARK(BM_NvmlSnapshotFakeGb10);

}  // namespace

BENCHMARK_MAIN();
