#include "tui/top_tracker.hpp"

#include <gtest/gtest.h>

namespace sparkops::tui {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const SteadyTime kT0{seconds{1000}};
const SystemTime kW0{seconds{1762680372}};

status::StatusReport report_at(int second, std::int64_t power_cap_ns, std::uint64_t refaults,
                               std::uint64_t oom_kills) {
  status::StatusReport r;
  r.taken_at = kW0 + seconds{second};
  host::PoolView p;
  p.total_bytes = 100ULL << 30;
  p.available_bytes = static_cast<std::uint64_t>(50 - second) << 30;
  p.free_now_bytes = 10ULL << 30;
  r.pool = p;
  r.gpu.backend = "nvml";
  r.gpu.state = gpu::GpuState::ok;
  r.gpu.devices = {gpu::GpuDevice{0, "NVIDIA GB10", "", ""}};
  gpu::GpuSnapshot s;
  s.index = 0;
  s.temp_millicelsius = 70'000 + second * 1000;
  s.power_microwatts = 90'000'000;
  s.clocks_event_reasons = 0;  // bits clear: only the counter says it throttles
  s.counters.sw_power_cap = std::chrono::nanoseconds{power_cap_ns};
  r.gpu.snapshots = {s};
  host::Vmstat v;
  v.workingset_refault_anon = refaults;
  v.workingset_refault_file = 0;
  v.oom_kill = oom_kills;
  v.pgmajfault = 10;
  r.vmstat = v;
  r.workloads = std::vector<status::WorkloadLine>{};
  return r;
}

bool has_event(const TopModel& m, std::string_view text) {
  for (const auto& e : m.events) {
    if (e.text.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(TopTracker, CounterDeltasOpenAnEpisodeWhileBitsAreClear) {
  TopTracker t;
  t.observe(report_at(0, 1'000'000'000, 0, 0), kT0);
  ASSERT_EQ(t.model().gpus.size(), 1u);
  EXPECT_EQ(t.model().gpus[0].interval.count(), 0);  // no deltas on the first refresh
  t.observe(report_at(1, 1'500'000'000, 0, 0), kT0 + seconds{1});
  const GpuActivity& a = t.model().gpus[0];
  EXPECT_EQ(a.interval, seconds{1});
  ASSERT_TRUE(a.counter_deltas.sw_power_cap);
  EXPECT_EQ(*a.counter_deltas.sw_power_cap, milliseconds{500});
  ASSERT_EQ(a.open_causes.size(), 1u);
  EXPECT_EQ(a.open_causes[0], sampling::ThrottleCause::sw_power_cap);
  EXPECT_TRUE(has_event(t.model(), "start sw_power_cap gpu=0"));
  // The counter stops: the episode ends and an end event follows.
  t.observe(report_at(2, 1'500'000'000, 0, 0), kT0 + seconds{2});
  EXPECT_TRUE(t.model().gpus[0].open_causes.empty());
  EXPECT_TRUE(has_event(t.model(), "end sw_power_cap gpu=0"));
}

TEST(TopTracker, SinceStartCountsFromTheFirstReport) {
  TopTracker t;
  t.observe(report_at(0, 0, 1000, 3), kT0);
  EXPECT_EQ(t.model().since_start.refaults, 0u);
  EXPECT_EQ(t.model().since_start.oom_kills, 0u);
  t.observe(report_at(2, 0, 9000, 4), kT0 + seconds{2});
  const SinceStart& s = t.model().since_start;
  EXPECT_EQ(s.refaults, 8000u);
  ASSERT_TRUE(s.refaults_per_second);
  EXPECT_DOUBLE_EQ(*s.refaults_per_second, 4000.0);
  EXPECT_EQ(s.oom_kills, 1u);
  EXPECT_EQ(s.elapsed, seconds{2});
  EXPECT_TRUE(has_event(t.model(), "oom_kill"));
}

TEST(TopTracker, HistoryIsBoundedAndOldestFirst) {
  TrackerOptions o;
  o.history_points = 3;
  TopTracker t(o);
  for (int i = 0; i < 5; ++i) t.observe(report_at(i, 0, 0, 0), kT0 + seconds{i});
  const auto& avail = t.model().pool_available_bytes;
  ASSERT_EQ(avail.size(), 3u);
  EXPECT_DOUBLE_EQ(*avail.front(), static_cast<double>(48ULL << 30));
  EXPECT_DOUBLE_EQ(*avail.back(), static_cast<double>(46ULL << 30));
  ASSERT_EQ(t.model().gpus[0].temperature_celsius.size(), 3u);
  EXPECT_DOUBLE_EQ(*t.model().gpus[0].temperature_celsius.back(), 74.0);
  EXPECT_EQ(t.model().refreshes, 5u);
}

TEST(TopTracker, WorkloadChangesAndTheHeavyRuleBecomeEvents) {
  TopTracker t;
  auto r = report_at(0, 0, 0, 0);
  status::WorkloadLine a;
  a.pid = 10;
  a.kind = "vllm";
  a.name = "python3";
  a.heavy = true;
  r.workloads = std::vector<status::WorkloadLine>{a};
  t.observe(r, kT0);
  EXPECT_FALSE(has_event(t.model(), "new workload"));  // the first scan is the baseline
  auto r2 = report_at(1, 0, 0, 0);
  status::WorkloadLine b = a;
  b.pid = 20;
  b.kind = "trainer";
  r2.workloads = std::vector<status::WorkloadLine>{a, b};
  t.observe(r2, kT0 + seconds{1});
  EXPECT_TRUE(has_event(t.model(), "new workload pid=20 trainer"));
  EXPECT_TRUE(has_event(t.model(), "2 heavy workloads at once"));
  auto r3 = report_at(2, 0, 0, 0);
  r3.workloads = std::vector<status::WorkloadLine>{a};
  t.observe(r3, kT0 + seconds{2});
  EXPECT_TRUE(has_event(t.model(), "workload pid=20 gone"));
  EXPECT_TRUE(has_event(t.model(), "one heavy job at a time: holds again"));
}

TEST(TopTracker, EventListIsBounded) {
  TrackerOptions o;
  o.event_capacity = 2;
  TopTracker t(o);
  for (int i = 0; i < 6; ++i) {
    // The counter advances on odd refreshes only: an episode starts and ends repeatedly.
    t.observe(report_at(i, (i + 1) / 2 * 1'000'000'000LL, 0, 0), kT0 + seconds{i});
  }
  EXPECT_EQ(t.model().events.size(), 2u);
}

}  // namespace
}  // namespace sparkops::tui
