#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "exporter/dashboard_page.hpp"
#include "exporter/event_tracker.hpp"
#include "exporter/exporter_state.hpp"
#include "exporter/history.hpp"
#include "exporter/http_server.hpp"
#include "exporter/listen_address.hpp"
#include "gpu/throttle_reasons.hpp"
#include "status_fixture.hpp"

namespace sparkops::exporter {
namespace {

using namespace std::chrono_literals;

TEST(ListenAddress, LoopbackForms) {
  for (const char* text :
       {"127.0.0.1:9877", "127.1.2.3:80", "localhost:9877", "[::1]:9877", "9877"}) {
    auto a = parse_listen_address(text);
    ASSERT_TRUE(a) << text;
    EXPECT_TRUE(a->loopback) << text;
  }
  EXPECT_EQ(parse_listen_address("[::1]:9877")->host, "::1");
  EXPECT_EQ(parse_listen_address("9877")->host, "127.0.0.1");
}

TEST(ListenAddress, EveryInterfaceIsNotLoopback) {
  for (const char* text : {"0.0.0.0:9877", ":9877", "[::]:9877", "192.168.1.20:9877"}) {
    auto a = parse_listen_address(text);
    ASSERT_TRUE(a) << text;
    EXPECT_FALSE(a->loopback) << text;
  }
  EXPECT_EQ(parse_listen_address(":9877")->host, "0.0.0.0");
}

TEST(ListenAddress, MalformedIsInvalidArgument) {
  for (const char* text :
       {"", "127.0.0.1:", "127.0.0.1:70000", "host.example:9877", "::1:9877", "[::1]9877"}) {
    auto a = parse_listen_address(text);
    ASSERT_FALSE(a) << text;
    EXPECT_EQ(a.error().code, Errc::invalid_argument);
  }
}

TEST(TokenMatches, OnlyTheExactTokenMatches) {
  EXPECT_TRUE(token_matches("abc", "abc"));
  EXPECT_FALSE(token_matches("abc", "abd"));
  EXPECT_FALSE(token_matches("abc", "ab"));
  EXPECT_FALSE(token_matches("abc", "abcd"));
  EXPECT_FALSE(token_matches("abc", ""));
}

TEST(HistoryRing, KeepsTheNewestPointsOldestFirst) {
  HistoryRing ring(3);
  for (int i = 0; i < 5; ++i) {
    HistoryPoint p;
    p.time_seconds = i;
    ring.push(p);
  }
  const auto points = ring.points();
  ASSERT_EQ(points.size(), 3U);
  EXPECT_EQ(points[0].time_seconds, 2);
  EXPECT_EQ(points[2].time_seconds, 4);
}

TEST(HistoryJson, AbsentValuesAreNull) {
  const auto bare = history_point(test::bare_status_report());
  const auto full = history_point(test::full_status_report());
  const auto doc = nlohmann::json::parse(history_to_json({bare, full}, 5, 720));
  EXPECT_EQ(doc["capacity"], 720);
  EXPECT_TRUE(doc["series"]["gpu_temperature_celsius"][0].is_null());
  EXPECT_EQ(doc["series"]["gpu_temperature_celsius"][1], 83.0);
  EXPECT_EQ(doc["series"]["pool_available_bytes"][0], 12884901888.0);
}

TEST(HistoryCapacity, IsOneHourOfIntervalsClamped) {
  EXPECT_EQ(history_capacity(1h, 5s), 720U);
  EXPECT_EQ(history_capacity(1h, 2h), 2U);
  EXPECT_EQ(history_capacity(std::chrono::hours{24 * 30}, 1s), 86400U);
}

status::StatusReport with_counters(std::chrono::seconds sw_thermal, std::uint64_t mask,
                                   SystemTime at) {
  auto r = test::full_status_report();
  r.taken_at = at;
  r.gpu.snapshots[0].counters.sw_thermal = sw_thermal;
  r.gpu.snapshots[0].clocks_event_reasons = mask;
  return r;
}

TEST(EventTracker, CounterAdvanceWithoutBitCountsOneThrottleEvent) {
  EventTracker tracker;
  const SystemTime t0{std::chrono::seconds{1762680372}};
  SteadyTime steady{};
  // The counter advances on ticks 2-4 with the bitmask clear, then stops: one episode.
  const std::chrono::seconds counter[] = {100s, 100s, 102s, 104s, 106s, 106s, 106s};
  for (std::size_t i = 0; i < std::size(counter); ++i) {
    tracker.observe(with_counters(counter[i], 0, t0 + i * 5s), steady + i * 5s);
  }
  const auto totals = tracker.totals();
  ASSERT_TRUE(totals.throttle);
  std::uint64_t sw_thermal = 0;
  for (const auto& e : *totals.throttle) {
    if (e.reason == "sw_thermal") sw_thermal = e.count;
  }
  EXPECT_EQ(sw_thermal, 1U);
}

TEST(EventTracker, RecentEventsKeepBothEdgesOfAnEpisodeOldestFirst) {
  EventTracker tracker;
  const SystemTime t0{std::chrono::seconds{1762680372}};
  SteadyTime steady{};
  const std::chrono::seconds counter[] = {100s, 100s, 102s, 104s, 106s, 106s, 106s};
  for (std::size_t i = 0; i < std::size(counter); ++i) {
    tracker.observe(with_counters(counter[i], 0, t0 + i * 5s), steady + i * 5s);
  }
  // The sw_thermal episode's two edges (the detector may add others, e.g. the platform cap).
  const auto recent = tracker.recent();
  const auto find = [&](std::string_view prefix) {
    for (std::size_t i = 0; i < recent.size(); ++i) {
      if (recent[i].detail.rfind(prefix, 0) == 0) return i;
    }
    return recent.size();
  };
  const std::size_t start = find("start sw_thermal gpu=0");
  const std::size_t end = find("end sw_thermal gpu=0");
  ASSERT_LT(start, recent.size());
  ASSERT_LT(end, recent.size());
  EXPECT_LT(start, end) << "oldest first";
  EXPECT_EQ(recent[start].kind, "throttle");
  EXPECT_LT(recent[start].time_seconds, recent[end].time_seconds);
  EXPECT_DOUBLE_EQ(recent[start].time_seconds, 1762680372.0 + 10.0);  // first sample showing it
  const auto doc = nlohmann::json::parse(history_to_json({}, 5, 720, recent));
  ASSERT_EQ(doc["events"].size(), recent.size());
  EXPECT_EQ(doc["events"][start]["kind"], "throttle");
}

TEST(EventTracker, RecentEventsAreBounded) {
  EventTracker tracker;
  auto two = test::full_status_report();  // trainer + vllm, both heavy
  auto one = two;
  (*one.workloads)[1].heavy = false;
  for (int i = 0; i < 200; ++i) tracker.observe(i % 2 ? two : one, SteadyTime{});
  const auto recent = tracker.recent();
  EXPECT_EQ(recent.size(), EventTracker::kRecentEvents);
  EXPECT_EQ(recent.back().kind, "heavy_jobs");
}

TEST(EventTracker, ReasonsStartAtZeroSoRateWorks) {
  EventTracker tracker;
  tracker.observe(with_counters(100s, 0, SystemTime{}), SteadyTime{});
  const auto totals = tracker.totals();
  ASSERT_TRUE(totals.throttle);
  ASSERT_TRUE(totals.slowdown);
  EXPECT_FALSE(totals.throttle->empty());
  for (const auto& e : *totals.throttle) EXPECT_EQ(e.count, 0U) << e.reason;
}

TEST(EventTracker, NoGpuMeansNoThrottleFamilies) {
  EventTracker tracker;
  tracker.observe(test::bare_status_report(), SteadyTime{});
  const auto totals = tracker.totals();
  EXPECT_FALSE(totals.throttle);
  EXPECT_FALSE(totals.contention);  // no workload scan ran
}

TEST(EventTracker, ContentionCountsEachStartOfTwoHeavyJobs) {
  EventTracker tracker;
  auto two = test::full_status_report();  // trainer + vllm, both heavy
  auto one = two;
  (*one.workloads)[1].heavy = false;
  for (const auto* r : {&one, &two, &two, &one, &two}) tracker.observe(*r, SteadyTime{});
  EXPECT_EQ(tracker.totals().contention, 2U);
}

TEST(EventTracker, MemoryPressureRisingBetweenReportsIsContention) {
  EventTracker tracker;
  auto calm = test::full_status_report();
  calm.memory_pressure = host::Psi{};
  auto pressed = calm;
  pressed.memory_pressure->some.avg10 = 35.0;
  tracker.observe(calm, SteadyTime{});
  ASSERT_TRUE(tracker.totals().contention);
  const std::uint64_t before = *tracker.totals().contention;  // the heavy-job rule, already broken
  tracker.observe(pressed, SteadyTime{std::chrono::seconds{5}});
  EXPECT_EQ(*tracker.totals().contention, before + 1);
  tracker.observe(pressed, SteadyTime{std::chrono::seconds{10}});  // steady pressure: no new event
  EXPECT_EQ(*tracker.totals().contention, before + 1);
}

TEST(ExporterState, RendersEverythingOnUpdate) {
  ExporterState state({});
  EXPECT_EQ(state.metrics_text(), nullptr);
  state.update(test::full_status_report(), SteadyTime{}, 0.01);
  ASSERT_NE(state.metrics_text(), nullptr);
  EXPECT_NE(state.metrics_text()->find("sparkops_throttle_events_total"), std::string::npos);
  EXPECT_TRUE(nlohmann::json::accept(*state.status_json()));
  EXPECT_EQ(nlohmann::json::parse(*state.history_json())["time"].size(), 1U);
}

TEST(DashboardPage, InlinesUplotAndLoadsNothingExternal) {
  const std::string page = dashboard_page();
  EXPECT_EQ(page.find("<!--@"), std::string::npos);
  EXPECT_NE(page.find("var uPlot="), std::string::npos);
  EXPECT_NE(page.find("api/history"), std::string::npos);
  EXPECT_EQ(page.find("<script src"), std::string::npos);
  EXPECT_EQ(page.find("<link"), std::string::npos);
}

}  // namespace
}  // namespace sparkops::exporter
