// The device-check probes work first time: run here against the fake libnvidia-ml.

#include <gtest/gtest.h>

#include "support/fake_nvml.hpp"
#include "support/test_support.hpp"

namespace sparkops::gpu {
namespace {

std::map<std::string, std::string> fake_env(std::string_view scenario) {
  auto env = test::fake_nvml_env(scenario);
  env["SPARKOPS_GPU_BACKEND"] = "";
  return env;
}

TEST(GpuProbe, PrintsEveryFigureAndNamesTheAbsentOnes) {
  const auto r = test::run_process({GPU_PROBE_BIN, "2"}, fake_env("gb10"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("backend: nvml"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("device 0: name \"NVIDIA GB10\""), std::string::npos);
  EXPECT_NE(r.out.find("temp_millicelsius: 81000"), std::string::npos);
  EXPECT_NE(r.out.find("counters.sw_thermal_ns: 903158000"), std::string::npos);
  EXPECT_NE(r.out.find("absent: power_limit_microwatts mem_clock_mhz mem_clock_max_mhz memory"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("snapshot 2: 1 gpu(s)"), std::string::npos);
}

TEST(GpuProbe, ReportsInitFailureWithoutCrashing) {
  const auto r = test::run_process({GPU_PROBE_BIN, "1"}, fake_env("init-failure"));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find("state: init_failed"), std::string::npos) << r.out;
}

TEST(NvmlRawProbe, PrintsFieldAnswersForBothIdSets) {
  const auto r = test::run_process({NVML_RAW_PROBE_BIN}, fake_env("gb10"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("field 251: rc  0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("field 269: rc  3"), std::string::npos);
  EXPECT_NE(r.out.find("memory_v2: rc 3"), std::string::npos);
  EXPECT_NE(r.out.find("margin_temperature: rc 0 (Success) 13 C"), std::string::npos);
}

}  // namespace
}  // namespace sparkops::gpu
