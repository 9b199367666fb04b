// CPU cost of one `sparkops sample` tick: read the host (fixture root), read the GPU (fake
// libnvidia-ml through the real dlopen path, or none), format the row, feed the detector.
// Run from anywhere: paths come from the build. Whole-process comparison: sample_vs_shell.sh.
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/resource.h>

#include <benchmark/benchmark.h>

#include "gpu/nvml_source.hpp"
#include "sampling/sampler.hpp"

namespace {

using namespace sparkops;

void tick_loop(benchmark::State& state, gpu::GpuSource* gpu, sampling::SampleFormat format) {
  const host::HostRoot root(std::string(SPARKOPS_BENCH_SOURCE_DIR) +
                            "/tests/fixtures/roots/gb10-finetune");
  sampling::Collector collector(root, gpu);
  sampling::Sampler sampler(collector, format, sampling::DetectorConfig{});
  ManualClock clock;
  std::uint64_t k = 0;
  std::size_t bytes = 0;
  for (auto _ : state) {
    clock.advance(std::chrono::seconds{1});
    sampling::Tick t{k, clock.steady_now(), clock.steady_now(), clock.system_now(), 0};
    sampling::TickResult r = sampler.tick(t);
    for (const auto& row : r.rows) bytes += row.size();
    benchmark::DoNotOptimize(r);
    ++k;
  }
  state.counters["row_bytes"] = static_cast<double>(bytes) / static_cast<double>(k == 0 ? 1 : k);
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  state.counters["peak_rss_kib"] = static_cast<double>(ru.ru_maxrss);
}

void BM_TickHostOnly(benchmark::State& state) {
  tick_loop(state, nullptr, static_cast<sampling::SampleFormat>(state.range(0)));
}
BENCHMARK(BM_TickHostOnly)->Arg(0)->Arg(1)->Arg(2)->ArgName("format");
// Fixed tick counts for instruction counting (sample_tick_profile.sh): the difference between
// 1001 ticks and 1 tick is 1000 steady ticks, without the first tick's sensor discovery.
BENCHMARK(BM_TickHostOnly)->Arg(1)->ArgName("format")->Iterations(1);
BENCHMARK(BM_TickHostOnly)->Arg(1)->ArgName("format")->Iterations(1001);

void BM_TickFakeNvml(benchmark::State& state) {
  ::setenv("FAKE_NVML_SCENARIO",
           (std::string(SPARKOPS_BENCH_SOURCE_DIR) + "/tests/fixtures/nvml/gb10-counters-advancing")
               .c_str(),
           1);
  auto gpu = gpu::make_nvml_gpu_source(SPARKOPS_BENCH_FAKE_NVML);
  tick_loop(state, gpu.get(), static_cast<sampling::SampleFormat>(state.range(0)));
}
BENCHMARK(BM_TickFakeNvml)->Arg(0)->Arg(1)->Arg(2)->ArgName("format");
BENCHMARK(BM_TickFakeNvml)->Arg(1)->ArgName("format")->Iterations(1);
BENCHMARK(BM_TickFakeNvml)->Arg(1)->ArgName("format")->Iterations(1001);

void BM_FormatExtendedRow(benchmark::State& state) {
  sampling::Sample s;
  sampling::GpuReading g;
  g.snapshot.temp_millicelsius = 81000;
  g.snapshot.power_microwatts = 98765000;
  g.snapshot.clocks_event_reasons = 0x20;
  s.gpus.push_back(g);
  for (auto _ : state)
    benchmark::DoNotOptimize(sampling::format_sample_rows(sampling::SampleFormat::extended, s));
}
BENCHMARK(BM_FormatExtendedRow);

}  // namespace

BENCHMARK_MAIN();
