// SmiGpuSource and open_gpu_source against the fake nvidia-smi (tests/gpu/fake_nvidia_smi) first
// on PATH, replaying tests/fixtures/nvidia-smi/replay/<scenario>.

#include <stdlib.h>

#include <gtest/gtest.h>

#include "base/text.hpp"
#include "gpu/open_source.hpp"
#include "gpu/smi_source.hpp"
#include "gpu/subprocess.hpp"
#include "gpu/throttle_reasons.hpp"
#include "support/fake_nvml.hpp"
#include "support/test_support.hpp"

namespace sparkops::gpu {
namespace {

constexpr std::string_view kFakePath = FAKE_SMI_BIN_DIR ":/usr/bin:/bin";

// Points the fake nvidia-smi at a replay folder; FAKE_SMI_LOG records each invocation.
class SmiReplay {
 public:
  explicit SmiReplay(std::string_view scenario) {
    const std::string dir =
        test::fixture(std::string("nvidia-smi/replay/") + std::string(scenario)).string();
    ::setenv("FAKE_SMI_DIR", dir.c_str(), 1);
    ::setenv("FAKE_SMI_LOG", log_path().c_str(), 1);
  }
  ~SmiReplay() {
    ::unsetenv("FAKE_SMI_DIR");
    ::unsetenv("FAKE_SMI_LOG");
  }
  std::string log_path() const { return (tmp_ / "smi.log").string(); }
  std::string log() const {
    return std::filesystem::exists(log_path()) ? test::slurp(log_path()) : std::string();
  }

 private:
  test::TempDir tmp_;
};

std::unique_ptr<GpuSource> open_smi() {
  SmiSourceOptions o;
  o.executable = *find_on_path("nvidia-smi", kFakePath);
  return make_smi_gpu_source(o);
}

TEST(SmiSource, Gb10ReplayGivesFiguresAndAbsences) {
  SmiReplay replay("gb10");
  auto src = open_smi();
  ASSERT_EQ(src->state(), GpuState::ok) << src->state_detail();
  EXPECT_EQ(src->backend(), "nvidia-smi");
  EXPECT_EQ(src->driver_version(), "580.95.05");
  ASSERT_EQ(src->devices().size(), 1U);
  EXPECT_EQ(src->devices()[0].name, "NVIDIA GB10");
  EXPECT_EQ(src->devices()[0].uuid, "GPU-2dee1e25-b3b5-007e-2b55-79f2d0f2ebe5");
  EXPECT_EQ(src->devices()[0].pci_bus_id, "0000000F:01:00.0");

  auto snap = src->snapshot();
  ASSERT_TRUE(snap) << snap.error().detail;
  ASSERT_EQ(snap->size(), 1U);
  const GpuSnapshot& s = (*snap)[0];
  EXPECT_EQ(s.temp_millicelsius, 45'000);
  EXPECT_EQ(s.power_microwatts, 11'170'000U);
  EXPECT_FALSE(s.power_limit_microwatts.has_value());
  EXPECT_EQ(s.sm_clock_mhz, 2405U);
  EXPECT_EQ(s.sm_clock_max_mhz, 2418U);
  EXPECT_FALSE(s.mem_clock_mhz.has_value());
  EXPECT_EQ(s.util_gpu_percent, 10U);
  EXPECT_EQ(s.pstate, 0U);
  EXPECT_EQ(s.clocks_event_reasons, 0U);
  EXPECT_FALSE(s.memory.has_value());
  EXPECT_FALSE(s.counters.sw_thermal.has_value());  // not in the CSV
  ASSERT_TRUE(s.processes.has_value());
  ASSERT_EQ(s.processes->size(), 2U);
  EXPECT_EQ((*s.processes)[0].pid, 114687U);
  EXPECT_EQ((*s.processes)[0].used_bytes, 19135ULL * 1024 * 1024);
  EXPECT_EQ((*s.processes)[0].name, "/usr/local/bin/python");
  EXPECT_FALSE((*s.processes)[1].used_bytes.has_value());
}

TEST(SmiSource, AsksForNoheaderNounitsCsv) {
  SmiReplay replay("gb10");
  auto src = open_smi();
  ASSERT_TRUE(src->snapshot());
  const std::string log = replay.log();
  EXPECT_NE(log.find("--query-gpu=index,name,uuid,pci.bus_id,driver_version,temperature.gpu,"
                     "power.draw,power.limit,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,"
                     "utilization.gpu,utilization.memory,pstate,clocks_event_reasons.active,"
                     "memory.total,memory.used,memory.free --format=csv,noheader,nounits"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("--query-compute-apps=gpu_uuid,pid,process_name,used_memory "
                     "--format=csv,noheader,nounits"),
            std::string::npos);
}

TEST(SmiSource, OldDriverFallsBackToThrottleReasonsName) {
  SmiReplay replay("gb10-old-driver");
  auto src = open_smi();
  ASSERT_EQ(src->state(), GpuState::ok) << src->state_detail();
  auto snap = src->snapshot();
  ASSERT_TRUE(snap) << snap.error().detail;
  EXPECT_EQ((*snap)[0].clocks_event_reasons, 0U);
  const std::string log = replay.log();
  EXPECT_NE(log.find("clocks_throttle_reasons.active"), std::string::npos);
  // Constructor: new name rejected, old name accepted; snapshot: old name straight away.
  EXPECT_EQ(log.find("clocks_event_reasons.active", log.find("clocks_throttle_reasons.active")),
            std::string::npos);
}

// A driver that knows neither power.limit nor clocks.max.mem refuses the query one field at a
// time; each refused field is dropped, the rest of the GPU still reads.
TEST(SmiSource, UnknownFieldsAreDroppedNotTheWholeGpu) {
  SmiReplay replay("gb10-new-fields");
  auto src = open_smi();
  ASSERT_EQ(src->state(), GpuState::ok) << src->state_detail();
  auto snap = src->snapshot();
  ASSERT_TRUE(snap) << snap.error().detail;
  const GpuSnapshot& s = (*snap)[0];
  EXPECT_EQ(s.temp_millicelsius, 45'000);
  EXPECT_EQ(s.power_microwatts, 11'170'000U);
  EXPECT_EQ(s.sm_clock_max_mhz, 2418U);
  EXPECT_EQ(s.clocks_event_reasons, 0U);
  EXPECT_FALSE(s.power_limit_microwatts.has_value());
  EXPECT_FALSE(s.mem_clock_max_mhz.has_value());
  ASSERT_TRUE(s.processes.has_value());
  EXPECT_EQ(s.processes->size(), 2U);
  const std::string log = replay.log();
  const auto queries = [&log] {
    std::vector<std::string> out;
    for (auto line : split_lines(log)) {
      if (line.starts_with("--query-gpu=")) out.emplace_back(line);
    }
    return out;
  }();
  // Construction: full list, without power.limit, without clocks.max.mem too; the snapshot asks
  // the reduced list straight away.
  ASSERT_EQ(queries.size(), 4U) << log;
  EXPECT_NE(queries[0].find("power.limit"), std::string::npos);
  EXPECT_EQ(queries[1].find("power.limit"), std::string::npos);
  EXPECT_NE(queries[1].find("clocks.max.mem"), std::string::npos);
  EXPECT_EQ(queries[2].find("clocks.max.mem"), std::string::npos);
  EXPECT_EQ(queries[3], queries[2]);
}

TEST(SmiSource, DiscreteGpusGetTheirOwnProcessesAndMemory) {
  SmiReplay replay("h200");
  auto src = open_smi();
  ASSERT_EQ(src->devices().size(), 2U);
  auto snap = src->snapshot();
  ASSERT_TRUE(snap);
  ASSERT_EQ(snap->size(), 2U);
  const GpuSnapshot& a = (*snap)[0];
  const GpuSnapshot& b = (*snap)[1];
  ASSERT_TRUE(a.memory.has_value());
  EXPECT_EQ(a.memory->total_bytes, 143771ULL * 1024 * 1024);
  EXPECT_EQ(a.memory->used_bytes, 604ULL * 1024 * 1024);
  EXPECT_EQ(a.memory->free_bytes, 142645ULL * 1024 * 1024);
  EXPECT_EQ(a.power_limit_microwatts, 700'000'000U);
  EXPECT_EQ(a.clocks_event_reasons, kReasonGpuIdle);
  EXPECT_EQ(b.index, 1U);
  EXPECT_EQ(b.power_microwatts, 120'310'000U);
  ASSERT_TRUE(a.processes && b.processes);
  EXPECT_TRUE(a.processes->empty());
  ASSERT_EQ(b.processes->size(), 1U);
  EXPECT_EQ((*b.processes)[0].pid, 20211U);
}

TEST(SmiSource, DriverNotLoadedIsInitFailedWithItsMessage) {
  SmiReplay replay("driver-not-loaded");
  auto src = open_smi();
  EXPECT_EQ(src->state(), GpuState::init_failed);
  EXPECT_NE(src->state_detail().find("couldn't communicate with the NVIDIA driver"),
            std::string::npos);
  auto snap = src->snapshot();
  ASSERT_TRUE(snap);
  EXPECT_TRUE(snap->empty());
}

TEST(SmiSource, GpuLostIsLostState) {
  SmiReplay good("gb10");
  auto src = open_smi();
  ASSERT_EQ(src->state(), GpuState::ok);
  {
    SmiReplay lost("gpu-lost");
    auto snap = src->snapshot();
    ASSERT_FALSE(snap);
    EXPECT_EQ(snap.error().code, Errc::gpu_lost);
    EXPECT_EQ(src->state(), GpuState::lost);
  }
  SmiReplay back("gb10");
  auto snap = src->snapshot();
  ASSERT_TRUE(snap) << snap.error().detail;
  EXPECT_EQ(src->state(), GpuState::ok);
}

TEST(OpenGpuSource, NvmlComesFirst) {
  test::use_nvml_scenario("gb10");
  SmiReplay replay("h200");
  GpuOpenOptions o;
  o.nvml_library = FAKE_NVML_LIB;
  o.path_env = std::string(kFakePath);
  auto src = open_gpu_source(o);
  EXPECT_EQ(src->backend(), "nvml");
  EXPECT_EQ(src->devices().at(0).name, "NVIDIA GB10");
}

TEST(OpenGpuSource, NvidiaSmiWhenNvmlIsMissing) {
  SmiReplay replay("gb10");
  GpuOpenOptions o;
  o.nvml_library = "/nonexistent/libnvidia-ml.so.1";
  o.path_env = std::string(kFakePath);
  auto src = open_gpu_source(o);
  EXPECT_EQ(src->backend(), "nvidia-smi");
  EXPECT_EQ(src->state(), GpuState::ok);
}

TEST(OpenGpuSource, NullSourceWithOneLineReasonWhenNothingIsThere) {
  GpuOpenOptions o;
  o.nvml_library = "/nonexistent/libnvidia-ml.so.1";
  o.path_env = "/nonexistent";
  auto src = open_gpu_source(o);
  EXPECT_EQ(src->backend(), "none");
  EXPECT_EQ(src->state(), GpuState::no_library);
  EXPECT_NE(src->state_detail().find("no nvidia-smi on PATH"), std::string::npos);
  EXPECT_EQ(src->state_detail().find('\n'), std::string::npos);
  auto snap = src->snapshot();
  ASSERT_TRUE(snap);
  EXPECT_TRUE(snap->empty());
}

TEST(OpenGpuSource, InitFailureIsNotMaskedByNvidiaSmi) {
  test::use_nvml_scenario("init-failure");
  SmiReplay replay("gb10");
  GpuOpenOptions o;
  o.nvml_library = FAKE_NVML_LIB;
  o.path_env = std::string(kFakePath);
  auto src = open_gpu_source(o);
  EXPECT_EQ(src->backend(), "nvml");
  EXPECT_EQ(src->state(), GpuState::init_failed);
}

TEST(OpenGpuSource, ChoicesForceABackend) {
  SmiReplay replay("gb10");
  test::use_nvml_scenario("gb10");
  GpuOpenOptions o;
  o.nvml_library = FAKE_NVML_LIB;
  o.path_env = std::string(kFakePath);
  o.choice = GpuBackendChoice::smi;
  EXPECT_EQ(open_gpu_source(o)->backend(), "nvidia-smi");
  o.choice = GpuBackendChoice::none;
  EXPECT_EQ(open_gpu_source(o)->backend(), "none");
  o.choice = GpuBackendChoice::nvml;
  o.nvml_library = "/nonexistent/libnvidia-ml.so.1";
  auto forced = open_gpu_source(o);
  EXPECT_EQ(forced->backend(), "nvml");
  EXPECT_EQ(forced->state(), GpuState::no_library);
}

TEST(OpenGpuSource, OptionsComeFromEnvironment) {
  ::setenv("SPARKOPS_NVML_LIB", "/opt/x/libnvidia-ml.so.1", 1);
  ::setenv("SPARKOPS_GPU_BACKEND", "nvidia-smi", 1);
  const auto o = gpu_open_options_from_environment();
  ::unsetenv("SPARKOPS_NVML_LIB");
  ::unsetenv("SPARKOPS_GPU_BACKEND");
  EXPECT_EQ(o.nvml_library, "/opt/x/libnvidia-ml.so.1");
  EXPECT_EQ(o.choice, GpuBackendChoice::smi);
  EXPECT_FALSE(o.path_env.empty());
  EXPECT_EQ(gpu_open_options_from_environment().choice, GpuBackendChoice::auto_detect);
}

TEST(GpuBackendChoice, ParsesNames) {
  EXPECT_EQ(parse_gpu_backend_choice("auto"), GpuBackendChoice::auto_detect);
  EXPECT_EQ(parse_gpu_backend_choice("nvml"), GpuBackendChoice::nvml);
  EXPECT_EQ(parse_gpu_backend_choice("smi"), GpuBackendChoice::smi);
  EXPECT_EQ(parse_gpu_backend_choice("none"), GpuBackendChoice::none);
  EXPECT_FALSE(parse_gpu_backend_choice("cuda").has_value());
}

}  // namespace
}  // namespace sparkops::gpu
