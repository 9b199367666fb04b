#include "gpu/nvml_source.hpp"

#include <gtest/gtest.h>

#include "gpu/nvml_api.hpp"
#include "gpu/throttle_reasons.hpp"
#include "support/fake_nvml.hpp"

namespace sparkops::gpu {
namespace {

using namespace std::chrono_literals;
using test::use_nvml_scenario;

std::unique_ptr<GpuSource> open_fake(std::string_view scenario, const char* lib = FAKE_NVML_LIB) {
  use_nvml_scenario(scenario);
  return make_nvml_gpu_source(lib);
}

TEST(NvmlSource, Gb10DeviceIsDescribed) {
  auto src = open_fake("gb10");
  ASSERT_EQ(src->state(), GpuState::ok) << src->state_detail();
  EXPECT_EQ(src->backend(), "nvml");
  EXPECT_EQ(src->state_detail(), "");
  EXPECT_EQ(src->driver_version(), "580.95.05");
  ASSERT_EQ(src->devices().size(), 1U);
  EXPECT_EQ(src->devices()[0].name, "NVIDIA GB10");
  EXPECT_EQ(src->devices()[0].uuid, "GPU-2dee1e25-b3b5-007e-2b55-79f2d0f2ebe5");
  EXPECT_EQ(src->devices()[0].pci_bus_id, "0000000F:01:00.0");
}

TEST(NvmlSource, Gb10SnapshotConvertsUnitsOnce) {
  auto src = open_fake("gb10");
  auto snap = src->snapshot();
  ASSERT_TRUE(snap) << snap.error().detail;
  ASSERT_EQ(snap->size(), 1U);
  const GpuSnapshot& s = (*snap)[0];
  EXPECT_EQ(s.index, 0U);
  EXPECT_EQ(s.temp_millicelsius, 81'000);
  EXPECT_EQ(s.margin_temp_millicelsius, 13'000);
  EXPECT_EQ(s.power_microwatts, 11'170'000U);
  EXPECT_EQ(s.energy_microjoules, 98'765'432'000U);
  EXPECT_EQ(s.sm_clock_mhz, 2190U);
  EXPECT_EQ(s.sm_clock_max_mhz, 2418U);
  EXPECT_EQ(s.util_gpu_percent, 96U);
  EXPECT_EQ(s.util_mem_percent, 0U);
  EXPECT_EQ(s.pstate, 0U);
  EXPECT_EQ(s.clocks_event_reasons, 0U);
}

TEST(NvmlSource, Gb10NotSupportedFiguresAreAbsentNotZero) {
  auto src = open_fake("gb10");
  auto snap = src->snapshot();
  ASSERT_TRUE(snap);
  const GpuSnapshot& s = (*snap)[0];
  EXPECT_FALSE(s.memory.has_value());
  EXPECT_FALSE(s.power_limit_microwatts.has_value());
  EXPECT_FALSE(s.mem_clock_mhz.has_value());
  EXPECT_FALSE(s.mem_clock_max_mhz.has_value());
}

TEST(NvmlSource, Gb10CountersUseR580FieldIds) {
  auto src = open_fake("gb10");
  auto snap = src->snapshot();
  ASSERT_TRUE(snap);
  const ThrottleCounters& c = (*snap)[0].counters;
  EXPECT_EQ(c.sw_power_cap, 165'687'000ns);
  EXPECT_EQ(c.sync_boost, 0ns);
  EXPECT_EQ(c.sw_thermal, 903'158'000ns);
  EXPECT_EQ(c.hw_thermal, 0ns);
  EXPECT_EQ(c.hw_power_brake, 0ns);
}

TEST(NvmlSource, Gb10ProcessesKeepUnknownMemoryAbsent) {
  auto src = open_fake("gb10");
  auto snap = src->snapshot();
  ASSERT_TRUE(snap);
  ASSERT_TRUE((*snap)[0].processes.has_value());
  const auto& procs = *(*snap)[0].processes;
  ASSERT_EQ(procs.size(), 2U);
  EXPECT_EQ(procs[0].pid, 114687U);
  EXPECT_EQ(procs[0].used_bytes, 20'064'501'760U);
  EXPECT_EQ(procs[1].pid, 4174U);
  EXPECT_FALSE(procs[1].used_bytes.has_value());
}

TEST(NvmlSource, CountersAdvanceWhileBitmaskStaysZero) {
  auto src = open_fake("gb10-counters-advancing");
  auto first = src->snapshot();
  auto second = src->snapshot();
  auto third = src->snapshot();
  ASSERT_TRUE(first && second && third);
  EXPECT_EQ((*first)[0].clocks_event_reasons, 0U);
  EXPECT_EQ((*third)[0].clocks_event_reasons, 0U);
  EXPECT_EQ(*(*second)[0].counters.sw_thermal - *(*first)[0].counters.sw_thermal, 2s);
  EXPECT_EQ(*(*third)[0].counters.sw_thermal - *(*second)[0].counters.sw_thermal, 2s);
  EXPECT_EQ(*(*third)[0].counters.sw_power_cap - *(*first)[0].counters.sw_power_cap, 1s);
  EXPECT_EQ(*(*third)[0].counters.hw_thermal, 0ns);
  EXPECT_EQ(*(*second)[0].energy_microjoules - *(*first)[0].energy_microjoules, 11'170'000U);
}

TEST(NvmlSource, H200ReportsMemoryAndPowerLimit) {
  auto src = open_fake("h200");
  ASSERT_EQ(src->state(), GpuState::ok);
  EXPECT_EQ(src->devices()[0].name, "NVIDIA H200");
  auto snap = src->snapshot();
  ASSERT_TRUE(snap);
  const GpuSnapshot& s = (*snap)[0];
  ASSERT_TRUE(s.memory.has_value());
  EXPECT_EQ(s.memory->total_bytes, 150'754'820'096U);
  EXPECT_EQ(s.memory->free_bytes, 150'121'480'192U);
  EXPECT_EQ(s.memory->used_bytes, 633'339'904U);
  EXPECT_EQ(s.power_limit_microwatts, 700'000'000U);
  EXPECT_EQ(s.mem_clock_mhz, 3201U);
  EXPECT_EQ(s.clocks_event_reasons, kReasonGpuIdle);
  ASSERT_TRUE(s.processes.has_value());
  EXPECT_TRUE(s.processes->empty());
}

TEST(NvmlSource, H200CountersUseR590FieldIds) {
  auto src = open_fake("h200");
  auto snap = src->snapshot();
  ASSERT_TRUE(snap);
  const ThrottleCounters& c = (*snap)[0].counters;
  EXPECT_EQ(c.sw_thermal, 0ns);
  EXPECT_EQ(c.hw_thermal, 0ns);
  EXPECT_EQ(c.hw_power_brake, 0ns);
}

TEST(NvmlSource, InitFailureIsAStateWithNvmlErrorString) {
  auto src = open_fake("init-failure");
  EXPECT_EQ(src->state(), GpuState::init_failed);
  EXPECT_EQ(src->state_detail(), "nvmlInit failed: Driver Not Loaded");
  EXPECT_TRUE(src->devices().empty());
  auto snap = src->snapshot();
  ASSERT_TRUE(snap);
  EXPECT_TRUE(snap->empty());
}

TEST(NvmlSource, ZeroDevicesIsNoDevices) {
  auto src = open_fake("no-devices");
  EXPECT_EQ(src->state(), GpuState::no_devices);
  EXPECT_EQ(src->driver_version(), "580.95.05");
  auto snap = src->snapshot();
  ASSERT_TRUE(snap);
  EXPECT_TRUE(snap->empty());
}

TEST(NvmlSource, MissingLibraryIsNoLibrary) {
  auto src = make_nvml_gpu_source("/nonexistent/libnvidia-ml.so.1");
  EXPECT_EQ(src->state(), GpuState::no_library);
  EXPECT_NE(src->state_detail().find("/nonexistent/libnvidia-ml.so.1"), std::string::npos);
  auto snap = src->snapshot();
  ASSERT_TRUE(snap);
  EXPECT_TRUE(snap->empty());
}

TEST(NvmlSource, LibraryWithoutNvmlSymbolsIsInitFailed) {
  auto src = make_nvml_gpu_source("libc.so.6");
  EXPECT_EQ(src->state(), GpuState::init_failed);
  EXPECT_NE(src->state_detail().find("not an NVML library"), std::string::npos);
}

TEST(NvmlSource, GpuLostThenRecovers) {
  auto src = open_fake("lost-after-2");
  ASSERT_TRUE(src->snapshot());
  ASSERT_TRUE(src->snapshot());
  EXPECT_EQ(src->state(), GpuState::ok);

  auto third = src->snapshot();
  ASSERT_FALSE(third);
  EXPECT_EQ(third.error().code, Errc::gpu_lost);
  EXPECT_EQ(src->state(), GpuState::lost);
  EXPECT_EQ(src->state_detail(), "GPU 0 lost: GPU is lost");

  auto fourth = src->snapshot();  // re-initialises, still lost
  ASSERT_FALSE(fourth);
  EXPECT_EQ(src->state(), GpuState::lost);

  auto fifth = src->snapshot();
  ASSERT_TRUE(fifth) << fifth.error().detail;
  EXPECT_EQ(src->state(), GpuState::ok);
  EXPECT_EQ((*fifth)[0].temp_millicelsius, 81'000);
  EXPECT_EQ(src->devices().size(), 1U);
}

TEST(NvmlSource, GpuLostForeverKeepsFailingWithoutCrash) {
  auto src = open_fake("lost-forever");
  ASSERT_TRUE(src->snapshot());
  for (int i = 0; i < 3; ++i) {
    auto snap = src->snapshot();
    ASSERT_FALSE(snap);
    EXPECT_EQ(snap.error().code, Errc::gpu_lost);
  }
  EXPECT_EQ(src->state(), GpuState::lost);
}

TEST(NvmlSource, OldApiFallsBackToOlderSymbols) {
  auto src = open_fake("gb10", FAKE_NVML_OLD_LIB);
  ASSERT_EQ(src->state(), GpuState::ok) << src->state_detail();
  auto snap = src->snapshot();
  ASSERT_TRUE(snap);
  const GpuSnapshot& s = (*snap)[0];
  EXPECT_FALSE(s.margin_temp_millicelsius.has_value());  // no nvmlDeviceGetMarginTemperature
  EXPECT_EQ(s.clocks_event_reasons, 0U);                 // ...ThrottleReasons answered
  ASSERT_TRUE(s.processes.has_value());                  // _v2 answered
  EXPECT_EQ(s.processes->size(), 2U);
  EXPECT_FALSE(s.memory.has_value());  // v1 NOT_SUPPORTED
}

TEST(NvmlSource, OldApiReadsMemoryThroughV1) {
  auto src = open_fake("h200", FAKE_NVML_OLD_LIB);
  auto snap = src->snapshot();
  ASSERT_TRUE(snap);
  ASSERT_TRUE((*snap)[0].memory.has_value());
  EXPECT_EQ((*snap)[0].memory->total_bytes, 150'754'820'096U);
}

TEST(NvmlFieldIds, EarlyR580SetWinsOnlyWhenTheDriverAnswersIt) {
  EXPECT_EQ(nvml::choose_slowdown_ids(NVML_SUCCESS), nvml::SlowdownIdSet::early_r580_251);
  // Driver 580.159.04 on an H200 declined 251-253 and answered 269-271 (device check).
  EXPECT_EQ(nvml::choose_slowdown_ids(NVML_ERROR_NOT_SUPPORTED), nvml::SlowdownIdSet::header_269);
  EXPECT_EQ(nvml::choose_slowdown_ids(NVML_ERROR_INVALID_ARGUMENT),
            nvml::SlowdownIdSet::header_269);
}

TEST(NvmlSource, HeaderIdsAreReadWhenTheEarlySetIsDeclined) {
  // The h200 scenario answers 269-271 only, like driver 580.159.04 did on a real H200.
  auto src = open_fake("h200", FAKE_NVML_LIB);
  auto snap = src->snapshot();
  ASSERT_TRUE(snap);
  EXPECT_TRUE((*snap)[0].counters.sw_thermal.has_value());
  EXPECT_TRUE((*snap)[0].counters.hw_thermal.has_value());
  EXPECT_TRUE((*snap)[0].counters.hw_power_brake.has_value());
}

}  // namespace
}  // namespace sparkops::gpu
