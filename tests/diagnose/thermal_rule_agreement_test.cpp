// The live throttle detector and `analyze`'s cause attribution apply one thermal rule
// (sampling/thermal_rule.hpp): the same samples, fed to the detector tick by tick and written to an
// extended CSV that analyze reads back, get the same platform-cap verdict.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "diagnose/causes.hpp"
#include "diagnose/thermal_log.hpp"
#include "sampling/throttle_detector.hpp"
#include "sampling/writers.hpp"

namespace sparkops::diagnose {
namespace {

using std::chrono::seconds;

const SystemTime kStart{seconds{1762680372}};

struct Point {
  double power_w;
  double temp_c;
  unsigned util;
};

struct Scenario {
  std::string name;
  std::vector<Point> baseline;  // the calm period analyze compares with
  std::vector<Point> episode;   // the slowdown window
  bool platform_cap;            // the verdict both sides must reach
};

void PrintTo(const Scenario& s, std::ostream* os) {
  *os << s.name;
}

std::vector<sampling::Sample> make_samples(const Scenario& sc) {
  std::vector<sampling::Sample> out;
  std::vector<Point> points = sc.baseline;
  points.insert(points.end(), sc.episode.begin(), sc.episode.end());
  for (std::size_t k = 0; k < points.size(); ++k) {
    sampling::Sample s;
    s.tick = k;
    s.wall_time = kStart + seconds{30 * static_cast<std::int64_t>(k)};
    s.steady_time = SteadyTime{seconds{30 * static_cast<std::int64_t>(k)}};
    s.gpu_state = gpu::GpuState::ok;
    sampling::GpuReading g;
    g.snapshot.index = 0;
    g.snapshot.power_microwatts = static_cast<std::uint64_t>(points[k].power_w * 1e6);
    g.snapshot.temp_millicelsius = static_cast<std::int64_t>(points[k].temp_c * 1000);
    g.snapshot.util_gpu_percent = points[k].util;
    g.snapshot.sm_clock_mhz = 2400;
    g.snapshot.sm_clock_max_mhz = 3003;
    g.snapshot.clocks_event_reasons = 0;
    s.gpus.push_back(g);
    sampling::compute_deltas(out.empty() ? nullptr : &out.back(), s);
    out.push_back(s);
  }
  return out;
}

// Whether a platform_cap episode is open at any sample of the episode window.
bool live_verdict(const Scenario& sc, const std::vector<sampling::Sample>& samples) {
  sampling::ThrottleDetector detector;
  bool open = false, seen = false;
  for (std::size_t k = 0; k < samples.size(); ++k) {
    for (const sampling::ThrottleEvent& e : detector.feed(samples[k])) {
      if (e.cause == sampling::ThrottleCause::platform_cap)
        open = e.edge == sampling::EpisodeEdge::start;
    }
    if (k >= sc.baseline.size() && open) seen = true;
  }
  return seen;
}

// analyze's verdict on the same samples, through the extended CSV writer and reader.
bool offline_verdict(const Scenario& sc, const std::vector<sampling::Sample>& samples) {
  std::string csv =
      sampling::format_file_header(sampling::SampleFormat::extended, sampling::FileMeta{});
  for (const sampling::Sample& s : samples) {
    for (const std::string& row : sampling::format_sample_rows(sampling::SampleFormat::extended, s))
      csv += row;
  }
  const auto log = parse_thermal_log(csv, ThermalReadOptions{});
  EXPECT_TRUE(log.has_value());
  if (!log) return false;
  EXPECT_EQ(log->samples.size(), samples.size());
  const Window baseline{samples.front().wall_time, samples[sc.baseline.size() - 1].wall_time};
  const Window window{samples[sc.baseline.size()].wall_time, samples.back().wall_time};
  Slowdown sd;
  attribute_cause(sd, window, baseline, *log, DiagnoseOptions{});
  return sd.cause == Cause::thermal && sd.explanation.starts_with("platform cap signature");
}

class ThermalRuleAgreement : public ::testing::TestWithParam<Scenario> {};

TEST_P(ThermalRuleAgreement, LiveDetectorAndAnalyzeReachTheSameVerdict) {
  const Scenario& sc = GetParam();
  const auto samples = make_samples(sc);
  EXPECT_EQ(live_verdict(sc, samples), sc.platform_cap) << "live detector";
  EXPECT_EQ(offline_verdict(sc, samples), sc.platform_cap) << "analyze";
}

const std::vector<Point> kCalm(6, Point{100, 70, 97});

INSTANTIATE_TEST_SUITE_P(
    Scenarios, ThermalRuleAgreement,
    ::testing::Values(
        // Power pinned at the ceiling while the GPU warms 3-4 C: a climb for the detector's window
        // and for the window-against-baseline medians alike (analyze used to ask for 5 C).
        Scenario{"ModestClimbAtCeiling",
                 kCalm,
                 {{100, 71, 97},
                  {100, 72, 97},
                  {100, 73, 97},
                  {100, 74, 97},
                  {100, 74, 97},
                  {100, 74, 97}},
                 true},
        // Hot at the ceiling under load.
        Scenario{"HotAtCeiling",
                 kCalm,
                 {{100, 84, 97},
                  {100, 85, 97},
                  {100, 85, 97},
                  {100, 85, 97},
                  {100, 85, 97},
                  {100, 85, 97}},
                 true},
        // Hot and at the ceiling but idle: no load, no cap (analyze used to skip the load check).
        Scenario{"HotAtCeilingButIdle", std::vector<Point>(6, Point{100, 84, 10}),
                 std::vector<Point>(6, Point{100, 85, 10}), false},
        // Steady at the ceiling, one degree above baseline (one step of the integer readings):
        // nothing climbs, nothing is hot.
        Scenario{"SteadyAtCeiling", kCalm, std::vector<Point>(6, Point{100, 71, 97}), false},
        // Climbing with power near its peak, far from the ceiling: not the cap.
        Scenario{"ClimbAwayFromCeiling",
                 std::vector<Point>(6, Point{180, 60, 97}),
                 {{180, 63, 97},
                  {180, 66, 97},
                  {180, 69, 97},
                  {180, 72, 97},
                  {180, 75, 97},
                  {180, 78, 97}},
                 false}),
    [](const ::testing::TestParamInfo<Scenario>& p) { return p.param.name; });

}  // namespace
}  // namespace sparkops::diagnose
