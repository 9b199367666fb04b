// The GPU call watchdog (gpu/watchdog_source.hpp) against a fake NVML that blocks like a wedged
// GB10 (scenarios hang-init and hang-after-1) and a fake nvidia-smi stuck in the driver. The
// blocked calls wait until the test creates a release file, so no assertion depends on speed:
// the watchdog timeout is short here only so the suite does not wait for the default.

#include <stdlib.h>

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "gpu/nvml_source.hpp"
#include "gpu/open_source.hpp"
#include "gpu/smi_source.hpp"
#include "gpu/subprocess.hpp"
#include "gpu/watchdog_source.hpp"
#include "support/fake_nvml.hpp"
#include "support/test_support.hpp"

namespace sparkops::gpu {
namespace {

using namespace std::chrono_literals;

constexpr auto kTimeout = 200ms;

// A copy of tests/fixtures/nvml/<name> whose hang ends when release() creates a file.
class HangingNvml {
 public:
  explicit HangingNvml(std::string_view name) {
    const auto scenario = tmp_ / "scenario";
    test::write_text(scenario, test::slurp(test::fixture("nvml/" + std::string(name))) +
                                   "\nhang_release = " + release_path().string() + "\n");
    test::use_nvml_scenario("gb10");  // resets the fake's counters
    ::setenv("FAKE_NVML_SCENARIO", scenario.c_str(), 1);
  }
  std::filesystem::path release_path() const { return tmp_ / "release"; }
  void release() const { test::write_text(release_path(), "go\n"); }

 private:
  test::TempDir tmp_;
};

std::unique_ptr<GpuSource> watched_nvml() {
  return make_watchdog_gpu_source([] { return make_nvml_gpu_source(FAKE_NVML_LIB); },
                                  WatchdogOptions{"nvml", kTimeout});
}

// Asks until the source answers again (the released call returns on the worker thread).
Result<std::vector<GpuSnapshot>> snapshot_once_back(GpuSource& src) {
  auto snap = src.snapshot();
  for (int i = 0; i < 1000 && !snap && snap.error().code == Errc::gpu_hung; ++i) {
    std::this_thread::sleep_for(10ms);
    snap = src.snapshot();
  }
  return snap;
}

TEST(GpuWatchdog, ReadingThatBlocksMarksTheGpuHungAndRecovers) {
  HangingNvml nvml("hang-after-1");
  auto src = watched_nvml();
  ASSERT_EQ(src->state(), GpuState::ok) << src->state_detail();
  ASSERT_TRUE(src->snapshot());  // tick 1 answers

  auto hung = src->snapshot();  // tick 2 blocks in nvmlDeviceGetTemperature
  ASSERT_FALSE(hung);
  EXPECT_EQ(hung.error().code, Errc::gpu_hung);
  EXPECT_EQ(src->state(), GpuState::hung);
  EXPECT_NE(src->state_detail().find("has not returned"), std::string::npos) << src->state_detail();
  EXPECT_EQ(src->devices().size(), 1U);  // still known while hung

  // While the call is out, asking again answers at once with the same state.
  auto again = src->snapshot();
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, Errc::gpu_hung);

  nvml.release();
  auto back = snapshot_once_back(*src);
  ASSERT_TRUE(back) << back.error().detail;
  EXPECT_EQ(src->state(), GpuState::ok);
  ASSERT_EQ(back->size(), 1U);
  EXPECT_EQ((*back)[0].temp_millicelsius, 81'000);
}

TEST(GpuWatchdog, InitThatBlocksIsHungWithoutDevicesThenStarts) {
  HangingNvml nvml("hang-init");
  auto src = watched_nvml();
  EXPECT_EQ(src->state(), GpuState::hung);
  EXPECT_EQ(src->backend(), "nvml");
  EXPECT_TRUE(src->devices().empty());
  EXPECT_NE(src->state_detail().find("starting the GPU backend"), std::string::npos);
  auto snap = src->snapshot();
  ASSERT_FALSE(snap);
  EXPECT_EQ(snap.error().code, Errc::gpu_hung);

  nvml.release();
  auto back = snapshot_once_back(*src);
  ASSERT_TRUE(back) << back.error().detail;
  EXPECT_EQ(src->state(), GpuState::ok);
  ASSERT_EQ(src->devices().size(), 1U);
  EXPECT_EQ(src->devices()[0].name, "NVIDIA GB10");
}

TEST(GpuWatchdog, DestroyingASourceWithACallOutDoesNotWaitForIt) {
  HangingNvml nvml("hang-init");
  {
    auto src = watched_nvml();
    EXPECT_EQ(src->state(), GpuState::hung);
  }  // returns although nvmlInit is still blocked; the detached worker ends after the release
  nvml.release();
}

TEST(GpuWatchdog, OpenGpuSourceWatchesNvml) {
  HangingNvml nvml("hang-init");
  GpuOpenOptions o;
  o.nvml_library = FAKE_NVML_LIB;
  o.path_env = "/nonexistent";
  o.call_timeout = kTimeout;
  auto src = open_gpu_source(o);
  EXPECT_EQ(src->backend(), "nvml");  // a hung NVML is not replaced by nvidia-smi
  EXPECT_EQ(src->state(), GpuState::hung);
  nvml.release();
  EXPECT_TRUE(snapshot_once_back(*src));
}

// Points the fake nvidia-smi at the "hang" replay; it blocks while the hold file exists, so
// every blocked copy ends when the scratch folder goes.
class HangingSmi {
 public:
  HangingSmi() {
    test::write_text(tmp_ / "hold", "hold\n");
    ::setenv("FAKE_SMI_DIR", test::fixture("nvidia-smi/replay/hang").c_str(), 1);
    ::setenv("FAKE_SMI_HOLD", (tmp_ / "hold").c_str(), 1);
  }
  ~HangingSmi() {
    ::unsetenv("FAKE_SMI_HOLD");
    ::unsetenv("FAKE_SMI_DIR");
  }

 private:
  test::TempDir tmp_;
};

TEST(GpuWatchdog, NvidiaSmiStuckInTheDriverIsHung) {
  HangingSmi smi;
  GpuOpenOptions o;
  o.nvml_library = "/nonexistent/libnvidia-ml.so.1";
  o.path_env = FAKE_SMI_BIN_DIR ":/usr/bin:/bin";
  o.call_timeout = kTimeout;
  auto src = open_gpu_source(o);
  EXPECT_EQ(src->backend(), "nvidia-smi");
  EXPECT_EQ(src->state(), GpuState::hung);
  auto snap = src->snapshot();
  ASSERT_FALSE(snap);
  EXPECT_EQ(snap.error().code, Errc::gpu_hung);
}

TEST(SmiSourceTimeout, KilledQueryIsHungNotInitFailed) {
  HangingSmi smi;
  SmiSourceOptions o;
  o.executable = *find_on_path("nvidia-smi", FAKE_SMI_BIN_DIR ":/usr/bin:/bin");
  o.timeout = 100ms;
  auto src = make_smi_gpu_source(o);
  EXPECT_EQ(src->state(), GpuState::hung);
  auto snap = src->snapshot();
  ASSERT_FALSE(snap);
  EXPECT_EQ(snap.error().code, Errc::gpu_hung);
  EXPECT_NE(src->state_detail().find("timed out"), std::string::npos) << src->state_detail();
}

}  // namespace
}  // namespace sparkops::gpu
