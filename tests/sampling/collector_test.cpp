#include "sampling/collector.hpp"

#include <gtest/gtest.h>

#include "fake_gpu_source.hpp"
#include "support/test_support.hpp"

namespace sparkops::sampling {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

gpu::GpuSnapshot snap(std::uint64_t energy_uj, std::int64_t sw_thermal_ns) {
  gpu::GpuSnapshot s;
  s.index = 0;
  s.temp_millicelsius = 70000;
  s.energy_microjoules = energy_uj;
  s.counters.sw_thermal = std::chrono::nanoseconds{sw_thermal_ns};
  return s;
}

TEST(Collector, DeltasComeFromThePreviousTick) {
  test::TempDir empty;
  const host::HostRoot root(empty.path());
  test::FakeGpuSource gpu;
  gpu.script = {snap(1'000'000, 0), snap(31'000'000, 2'500'000'000)};
  Collector c(root, &gpu);
  const SteadyTime t0{seconds{10}};
  const Sample a = c.collect(0, t0, SystemTime{});
  EXPECT_FALSE(a.gpus[0].deltas.energy_microjoules.has_value());
  const Sample b = c.collect(1, t0 + seconds{30}, SystemTime{});
  EXPECT_EQ(b.interval, seconds{30});
  EXPECT_EQ(b.gpus[0].deltas.energy_microjoules, 30'000'000U);
  EXPECT_EQ(b.gpus[0].deltas.throttle.sw_thermal, milliseconds{2500});
}

TEST(Collector, CounterGoingBackwardsGivesNoDelta) {
  test::TempDir empty;
  test::FakeGpuSource gpu;
  gpu.script = {snap(5'000'000, 9'000'000'000), snap(1'000'000, 1'000'000'000)};  // driver reloaded
  Collector c(host::HostRoot(empty.path()), &gpu);
  c.collect(0, SteadyTime{seconds{0}}, SystemTime{});
  const Sample b = c.collect(1, SteadyTime{seconds{1}}, SystemTime{});
  EXPECT_FALSE(b.gpus[0].deltas.energy_microjoules.has_value());
  EXPECT_FALSE(b.gpus[0].deltas.throttle.sw_thermal.has_value());
}

TEST(Collector, HungGpuIsAskedEveryTickAndTheHostIsStillRead) {
  const host::HostRoot root(test::fixture("roots/gb10-finetune"));
  test::FakeGpuSource gpu;
  gpu.script = {snap(0, 0)};
  Collector c(root, &gpu);
  const auto at = [](int ms) { return SteadyTime{milliseconds{ms}}; };
  EXPECT_EQ(c.collect(0, at(0), SystemTime{}).gpu_state, gpu::GpuState::ok);
  gpu.hung = true;
  const Sample hung = c.collect(1, at(100), SystemTime{});
  EXPECT_EQ(hung.gpu_state, gpu::GpuState::hung);
  EXPECT_NE(hung.gpu_detail.find("has not returned"), std::string::npos);
  EXPECT_TRUE(hung.gpus.empty());
  EXPECT_EQ(hung.devices.size(), 1U);
  EXPECT_TRUE(hung.host.mem_available_bytes.has_value());
  EXPECT_TRUE(hung.host.hottest_millicelsius.has_value());
  c.collect(2, at(200), SystemTime{});  // no back-off: the watchdog answers at once
  EXPECT_EQ(gpu.calls, 3);
  gpu.hung = false;
  EXPECT_EQ(c.collect(3, at(300), SystemTime{}).gpu_state, gpu::GpuState::ok);
}

TEST(Collector, LostGpuIsRetriedWithBackoffNotEveryTick) {
  test::TempDir empty;
  test::FakeGpuSource gpu;
  gpu.script = {snap(0, 0), std::nullopt, std::nullopt, snap(0, 0)};
  Collector c(host::HostRoot(empty.path()), &gpu);
  const auto at = [](int ms) { return SteadyTime{milliseconds{ms}}; };
  EXPECT_EQ(c.collect(0, at(0), SystemTime{}).gpu_state, gpu::GpuState::ok);
  const Sample lost = c.collect(1, at(100), SystemTime{});  // fails: next try after 1 s
  EXPECT_EQ(lost.gpu_state, gpu::GpuState::lost);
  EXPECT_TRUE(lost.gpus.empty());
  EXPECT_EQ(lost.devices.size(), 1U);  // rows still name the device, with absent cells
  EXPECT_EQ(gpu.calls, 2);
  c.collect(2, at(600), SystemTime{});  // inside the back-off: not asked
  EXPECT_EQ(gpu.calls, 2);
  c.collect(3, at(1100), SystemTime{});  // asked, fails again: next try after 2 s
  EXPECT_EQ(gpu.calls, 3);
  EXPECT_EQ(c.gpu_failures(), 2U);
  c.collect(4, at(2500), SystemTime{});
  EXPECT_EQ(gpu.calls, 3);
  const Sample back = c.collect(5, at(3200), SystemTime{});
  EXPECT_EQ(gpu.calls, 4);
  EXPECT_EQ(back.gpu_state, gpu::GpuState::ok);
  EXPECT_EQ(c.gpu_failures(), 0U);
}

TEST(Collector, NoGpuSourceGivesHostOnlySamples) {
  test::TempDir empty;
  Collector c(host::HostRoot(empty.path()), nullptr);
  const Sample s = c.collect(0, SteadyTime{}, SystemTime{});
  EXPECT_EQ(s.gpu_state, gpu::GpuState::no_library);
  EXPECT_TRUE(s.gpus.empty());
}

}  // namespace
}  // namespace sparkops::sampling
