#include "sampling/throttle_detector.hpp"

#include <gtest/gtest.h>

#include "gpu/throttle_reasons.hpp"

namespace sparkops::sampling {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const SystemTime kStart{seconds{1762680372}};

struct Gen {
  std::uint64_t k = 0;
  gpu::ThrottleCounters counters{seconds{0}, seconds{0}, seconds{0}, seconds{0}, seconds{0}};
  std::optional<Sample> previous;

  Sample make(double power_w, double temp_c, unsigned util, unsigned clock = 2400,
              std::uint64_t reasons = 0, std::chrono::nanoseconds sw_thermal_add = {}) {
    counters.sw_thermal = *counters.sw_thermal + sw_thermal_add;
    Sample s;
    s.tick = k;
    s.wall_time = kStart + seconds{30 * static_cast<std::int64_t>(k)};
    s.steady_time = SteadyTime{seconds{30 * static_cast<std::int64_t>(k)}};
    s.gpu_state = gpu::GpuState::ok;
    s.host.hottest_sensor = "acpitz/temp1";
    s.host.hottest_millicelsius = 50000;
    GpuReading g;
    g.snapshot.index = 0;
    g.snapshot.power_microwatts = static_cast<std::uint64_t>(power_w * 1e6);
    g.snapshot.temp_millicelsius = static_cast<std::int64_t>(temp_c * 1000);
    g.snapshot.util_gpu_percent = util;
    g.snapshot.sm_clock_mhz = clock;
    g.snapshot.sm_clock_max_mhz = 3003;
    g.snapshot.clocks_event_reasons = reasons;
    g.snapshot.counters = counters;
    s.gpus.push_back(g);
    compute_deltas(previous ? &*previous : nullptr, s);
    previous = s;
    ++k;
    return s;
  }
};

std::vector<ThrottleEvent> run(ThrottleDetector& d, const std::vector<Sample>& samples) {
  std::vector<ThrottleEvent> all;
  for (const auto& s : samples) {
    auto ev = d.feed(s);
    all.insert(all.end(), ev.begin(), ev.end());
  }
  return all;
}

TEST(ThrottleDetector, CounterAdvancingWithBitmaskClearIsAnEpisode) {
  Gen g;
  ThrottleDetector d;
  std::vector<Sample> s;
  s.push_back(g.make(60, 81, 97, 2400, 0));
  s.push_back(g.make(60, 81, 97, 2400, 0, seconds{12}));
  s.push_back(g.make(60, 82, 97, 2400, 0, milliseconds{300}));
  s.push_back(g.make(60, 80, 97, 2400, 0));
  const auto ev = run(d, s);
  ASSERT_EQ(ev.size(), 2U);
  EXPECT_EQ(ev[0].edge, EpisodeEdge::start);
  EXPECT_EQ(ev[0].cause, ThrottleCause::sw_thermal);
  EXPECT_EQ(ev[0].time, s[1].wall_time);
  EXPECT_NE(ev[0].evidence.find("bit=clear counter_delta_s=12.000 interval_s=30.000"),
            std::string::npos)
      << ev[0].evidence;
  EXPECT_EQ(ev[1].edge, EpisodeEdge::end);
  EXPECT_EQ(ev[1].time, s[3].wall_time);
  EXPECT_NE(ev[1].evidence.find("samples=2 counter_total_s=12.300"), std::string::npos)
      << ev[1].evidence;
}

TEST(ThrottleDetector, ReasonBitAloneStartsAndEndsAnEpisode) {
  Gen g;
  ThrottleDetector d;
  const auto ev =
      run(d, {g.make(60, 70, 90, 2400, gpu::kReasonSwPowerCap), g.make(60, 70, 90, 2400, 0)});
  ASSERT_EQ(ev.size(), 2U);
  EXPECT_EQ(ev[0].cause, ThrottleCause::sw_power_cap);
  EXPECT_NE(ev[0].evidence.find("bit=set"), std::string::npos);
  EXPECT_EQ(ev[1].edge, EpisodeEdge::end);
}

TEST(ThrottleDetector, CounterIncreaseBelowThresholdIsNoise) {
  Gen g;
  ThrottleDetector d;
  const auto ev =
      run(d, {g.make(60, 70, 90), g.make(60, 70, 90, 2400, 0, std::chrono::microseconds{10})});
  EXPECT_TRUE(ev.empty());
}

TEST(ThrottleDetector, FlatPowerAtCeilingWhileTemperatureClimbsIsPlatformCap) {
  Gen g;
  ThrottleDetector d;
  std::vector<Sample> s;
  for (double t : {70.0, 72.0, 74.0, 76.0, 78.0}) s.push_back(g.make(99.5, t, 96));
  const auto ev = run(d, s);
  ASSERT_EQ(ev.size(), 1U);
  EXPECT_EQ(ev[0].cause, ThrottleCause::platform_cap);
  EXPECT_EQ(ev[0].edge, EpisodeEdge::start);
  EXPECT_EQ(ev[0].time, s[1].wall_time);  // the first sample of the sustained run
  EXPECT_NE(ev[0].evidence.find("ceiling_w=100"), std::string::npos) << ev[0].evidence;
}

TEST(ThrottleDetector, HotAtTheCeilingIsPlatformCapEvenWhenTemperatureIsSteady) {
  Gen g;
  ThrottleDetector d;
  const auto ev = run(d, {g.make(101, 84, 96), g.make(101, 84, 96), g.make(101, 84, 96)});
  ASSERT_EQ(ev.size(), 1U);
  EXPECT_EQ(ev[0].cause, ThrottleCause::platform_cap);
}

TEST(ThrottleDetector, RisingTemperatureWithPowerNearPeakIsNotAnEvent) {
  Gen g;
  ThrottleDetector d;
  std::vector<Sample> s;
  double t = 60;
  for (double p : {180.0, 195.0, 200.0, 198.0, 201.0, 199.0}) {
    s.push_back(g.make(p, t, 98));
    t += 5;  // climbs to 85 C, above hot
  }
  EXPECT_TRUE(run(d, s).empty());
}

TEST(ThrottleDetector, CeilingPowerWhileIdleIsNotPlatformCap) {
  Gen g;
  ThrottleDetector d;
  EXPECT_TRUE(run(d, {g.make(100, 70, 10), g.make(100, 74, 10), g.make(100, 78, 10)}).empty());
}

TEST(ThrottleDetector, LowClockUnderLoadWithoutReasonIsUnflaggedState) {
  Gen g;
  ThrottleDetector d;
  std::vector<Sample> s{g.make(40, 60, 95, 2400), g.make(40, 60, 95, 850), g.make(40, 60, 95, 850),
                        g.make(40, 60, 95, 2400), g.make(40, 60, 95, 2400)};
  const auto ev = run(d, s);
  ASSERT_EQ(ev.size(), 2U);
  EXPECT_EQ(ev[0].cause, ThrottleCause::unflagged_low_clock);
  EXPECT_EQ(ev[0].time, s[1].wall_time);
  EXPECT_NE(ev[0].evidence.find("sm_clock_mhz=850"), std::string::npos);
  EXPECT_EQ(ev[1].edge, EpisodeEdge::end);
  EXPECT_EQ(ev[1].time, s[3].wall_time);
}

TEST(ThrottleDetector, LowClockForOneSampleIsNotSustained) {
  Gen g;
  ThrottleDetector d;
  EXPECT_TRUE(run(d, {g.make(40, 60, 95, 850), g.make(40, 60, 95, 2400)}).empty());
}

TEST(ThrottleDetector, PowerFarUnderTheRunsOwnLevelIsUnflaggedSlowState) {
  Gen g;
  ThrottleDetector d;
  std::vector<Sample> s;
  for (int i = 0; i < 4; ++i) s.push_back(g.make(90, 70, 96));
  s.push_back(g.make(35, 65, 96));
  s.push_back(g.make(34, 64, 96));
  const auto ev = run(d, s);
  ASSERT_EQ(ev.size(), 1U);
  EXPECT_EQ(ev[0].cause, ThrottleCause::unflagged_low_power);
  EXPECT_NE(ev[0].evidence.find("run_peak_w=90.00"), std::string::npos) << ev[0].evidence;
}

TEST(ThrottleDetector, GpuLostIsAnEpisodeUntilItAnswersAgain) {
  Gen g;
  ThrottleDetector d;
  Sample ok = g.make(50, 60, 50);
  Sample lost = ok;
  lost.gpus.clear();
  lost.gpu_state = gpu::GpuState::lost;
  lost.gpu_detail = "GPU is lost";
  lost.wall_time += seconds{30};
  Sample back = ok;
  back.wall_time += seconds{60};
  const auto ev = run(d, {ok, lost, back});
  ASSERT_EQ(ev.size(), 2U);
  EXPECT_EQ(ev[0].cause, ThrottleCause::gpu_lost);
  EXPECT_FALSE(ev[0].gpu_index.has_value());
  EXPECT_EQ(ev[1].edge, EpisodeEdge::end);
}

TEST(ThrottleDetector, VanishedHostSensorIsLogged) {
  Gen g;
  ThrottleDetector d;
  Sample a = g.make(50, 60, 50);
  Sample b = g.make(50, 60, 50);
  b.host.hottest_millicelsius.reset();
  b.host.hottest_sensor.reset();
  const auto ev = run(d, {a, b});
  ASSERT_EQ(ev.size(), 1U);
  EXPECT_EQ(ev[0].cause, ThrottleCause::host_sensor_lost);
}

TEST(ThrottleDetector, FinishClosesOpenEpisodes) {
  Gen g;
  ThrottleDetector d;
  run(d, {g.make(60, 70, 90, 2400, gpu::kReasonHwThermal)});
  const auto ev = d.finish(kStart + seconds{99});
  ASSERT_EQ(ev.size(), 1U);
  EXPECT_EQ(ev[0].cause, ThrottleCause::hw_thermal);
  EXPECT_NE(ev[0].evidence.find("reason=sampler_stopped"), std::string::npos);
}

TEST(ThrottleEventLine, IsOneLineWithIsoTimeKindCauseAndEvidence) {
  ThrottleEvent e{kStart, EpisodeEdge::start, ThrottleCause::sw_thermal, 0U,
                  "bit=clear counter_delta_s=1.000"};
  EXPECT_EQ(
      format_event_line(e),
      "2025-11-09T09:26:12.000Z start cause=sw_thermal gpu=0 bit=clear counter_delta_s=1.000\n");
}

}  // namespace
}  // namespace sparkops::sampling
