// Cost of the host readers: one HostSnapshot over a fixture root (the work `status` does per call)
// and the hwmon walk alone (the biggest part on a GB10: ~7 chips, ~150 attribute files).
#include <benchmark/benchmark.h>

#include <filesystem>

#include "host/host_snapshot.hpp"

namespace {

std::filesystem::path root_dir(const char* name) {
  return std::filesystem::path(SPARKOPS_BENCH_SOURCE_DIR) / "tests/fixtures/roots" / name;
}

void BM_HostSnapshotGb10Idle(benchmark::State& state) {
  const sparkops::host::HostRoot root(root_dir("gb10-idle"));
  for (auto _ : state) benchmark::DoNotOptimize(sparkops::host::read_host_snapshot(root));
}
BENCHMARK(BM_HostSnapshotGb10Idle);

void BM_HostSnapshotX86Bare(benchmark::State& state) {
  const sparkops::host::HostRoot root(root_dir("x86-bare"));
  for (auto _ : state) benchmark::DoNotOptimize(sparkops::host::read_host_snapshot(root));
}
BENCHMARK(BM_HostSnapshotX86Bare);

void BM_HwmonWalkGb10Idle(benchmark::State& state) {
  const sparkops::host::HostRoot root(root_dir("gb10-idle"));
  for (auto _ : state) benchmark::DoNotOptimize(sparkops::host::read_hwmon_chips(root));
}
BENCHMARK(BM_HwmonWalkGb10Idle);

void BM_HostSnapshotLive(benchmark::State& state) {
  const sparkops::host::HostRoot root("/");
  for (auto _ : state) benchmark::DoNotOptimize(sparkops::host::read_host_snapshot(root));
}
BENCHMARK(BM_HostSnapshotLive);

}  // namespace

BENCHMARK_MAIN();
