// Golden files for the three formats and the events, produced by the real pipeline: fixture host
// roots, the fake libnvidia-ml through the real dlopen path, and a ManualClock.
#include <cstdlib>
#include <ctime>
#include <stop_token>

#include <gtest/gtest.h>

#include "gpu/nvml_source.hpp"
#include "sampling/sampler.hpp"
#include "support/fake_nvml.hpp"
#include "support/test_support.hpp"

namespace sparkops::sampling {
namespace {

struct SamplerOutput {
  std::string file;
  std::string events;
};

SamplerOutput run_sampler(const std::string& root_name, const std::filesystem::path& scenario,
                          SampleFormat format, std::uint64_t ticks) {
  ::setenv("TZ", "UTC", 1);
  ::tzset();
  test::use_nvml_scenario_at(scenario);
  const host::HostRoot root(test::fixture("roots/" + root_name));
  auto gpu = gpu::make_nvml_gpu_source(FAKE_NVML_LIB);
  Collector collector(root, gpu.get());
  Sampler sampler(collector, format, DetectorConfig{});
  ManualClock clock;
  SamplerOutput run;
  run.file = format_file_header(format, make_file_meta(root, gpu.get(), "0.0.0-test"));
  std::stop_source stop;
  run_schedule(clock, std::chrono::seconds{30}, {ticks, std::nullopt}, stop.get_token(),
               [&](const Tick& t) {
                 auto r = sampler.tick(t);
                 for (const auto& row : r.rows) run.file += row;
                 for (const auto& e : r.events) run.events += format_event_line(e);
               });
  for (const auto& e : sampler.finish(clock.system_now())) run.events += format_event_line(e);
  return run;
}

TEST(SampleGolden, ThreeFormatsOnAFineTuningGb10WithCountersAdvancing) {
  const auto scenario = test::fixture("nvml/gb10-counters-advancing");
  const SamplerOutput smi = run_sampler("gb10-finetune", scenario, SampleFormat::nvidia_smi, 4);
  test::expect_golden("golden/sample/gb10-finetune.nvidia-smi.log", smi.file);
  const SamplerOutput ext = run_sampler("gb10-finetune", scenario, SampleFormat::extended, 4);
  test::expect_golden("golden/sample/gb10-finetune.extended.csv", ext.file);
  const SamplerOutput jsonl = run_sampler("gb10-finetune", scenario, SampleFormat::jsonl, 4);
  test::expect_golden("golden/sample/gb10-finetune.jsonl", jsonl.file);
  // Every reason bit reads clear, yet the counters advance: the detector reports the episodes.
  test::expect_golden("golden/sample/gb10-finetune.events", ext.events);
  EXPECT_NE(ext.events.find("start cause=sw_thermal gpu=0 bit=clear counter_delta_s=2.000"),
            std::string::npos)
      << ext.events;
  EXPECT_NE(ext.events.find("start cause=sw_power_cap gpu=0 bit=clear counter_delta_s=0.500"),
            std::string::npos)
      << ext.events;
}

TEST(SampleGolden, GpuLostMidRunTurnsColumnsNotAvailableAndLogsAnEpisode) {
  const SamplerOutput smi = run_sampler("gb10-throttled", test::fixture("nvml/lost-after-2"),
                                        SampleFormat::nvidia_smi, 6);
  test::expect_golden("golden/sample/gpu-lost.nvidia-smi.log", smi.file);
  EXPECT_NE(smi.file.find(", [N/A], [N/A]\n"), std::string::npos) << smi.file;
  test::expect_golden("golden/sample/gpu-lost.events", smi.events);
  EXPECT_NE(smi.events.find("start cause=gpu_lost"), std::string::npos) << smi.events;
  EXPECT_NE(smi.events.find("end cause=gpu_lost"), std::string::npos) << smi.events;
}

TEST(SampleGolden, NotSupportedFieldsAreAbsentNeverZero) {
  const auto scenario = test::fixture("sample/nvml-gb10-not-supported");
  const SamplerOutput smi = run_sampler("gb10-idle", scenario, SampleFormat::nvidia_smi, 2);
  test::expect_golden("golden/sample/not-supported.nvidia-smi.log", smi.file);
  const SamplerOutput ext = run_sampler("gb10-idle", scenario, SampleFormat::extended, 2);
  test::expect_golden("golden/sample/not-supported.extended.csv", ext.file);
  EXPECT_EQ(smi.file.find(", 0,"), std::string::npos);
}

TEST(SampleGolden, HostOnlyMachineWritesHostColumnsAndNoGpu) {
  ::setenv("TZ", "UTC", 1);
  ::tzset();
  const host::HostRoot root(test::fixture("roots/x86-bare"));
  Collector collector(root, nullptr);
  Sampler sampler(collector, SampleFormat::extended, DetectorConfig{});
  ManualClock clock;
  std::string file =
      format_file_header(SampleFormat::extended, make_file_meta(root, nullptr, "0.0.0-test"));
  std::stop_source stop;
  run_schedule(clock, std::chrono::seconds{1}, {2, std::nullopt}, stop.get_token(),
               [&](const Tick& t) {
                 for (const auto& row : sampler.tick(t).rows) file += row;
               });
  test::expect_golden("golden/sample/x86-bare.extended.csv", file);
}

}  // namespace
}  // namespace sparkops::sampling
