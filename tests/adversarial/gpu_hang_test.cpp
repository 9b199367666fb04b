// A wedged GPU driver (docs/reliability.md "The machine's own failure modes"): NVML calls that
// never return (fake NVML scenarios hang-init and hang-after-1) must cost one gpu.timeout, turn the
// GPU hung (a state, an event, a metric) and leave every host figure flowing.
#include <string>
#include <string_view>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/text.hpp"
#include "exporter/event_tracker.hpp"
#include "exporter/metrics_builder.hpp"
#include "support/fake_nvml.hpp"
#include "support/test_support.hpp"

namespace sparkops {
namespace {

namespace fs = std::filesystem;

// A config that bounds each GPU call at 200 ms, so the suite does not wait the default 10 s. The
// fake's calls block until the process exits, so the assertions do not depend on speed.
fs::path short_timeout_config(const test::TempDir& tmp, std::string_view timeout = "200ms") {
  const auto path = tmp / "config.toml";
  test::write_text(path, "[gpu]\ntimeout = \"" + std::string(timeout) + "\"\n");
  return path;
}

TEST(GpuHang, StatusAnswersWhileNvmlInitIsWedged) {
  const test::TempDir tmp;
  const auto r = test::run_sparkops(
      {"--root", test::fixture("roots/gb10-finetune").string(), "status", "--json", "--gpu",
       "nvml"},
      test::fake_nvml_env("hang-init", {{"SPARKOPS_CONFIG", short_timeout_config(tmp).string()}}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["gpu"]["state"], "hung");
  const auto detail = j["gpu"]["detail"].get<std::string>();
  EXPECT_NE(detail.find("has not returned"), std::string::npos) << detail;
  // The time out counts from when the call was posted (it said "after 0.0 s" at the timeout).
  EXPECT_EQ(detail.find("after 0.0 s"), std::string::npos) << detail;
  EXPECT_FALSE(j["pool"].is_null());  // the host side is read as usual
}

// The interval is longer than the watchdog's timeout, so a hung tick never makes the scheduler skip
// the next one (a tick late by more than one interval is skipped, and --count counts ticks): the
// row count does not depend on how loaded the machine is. The 1 s timeout leaves the one call that
// answers (tick 1) ample time on a loaded machine.
TEST(GpuHang, SampleKeepsEveryHostRowAndLogsTheHang) {
  const test::TempDir tmp;
  const auto out = tmp / "thermal.jsonl";
  const auto r = test::run_sparkops(
      {"--root", test::fixture("roots/gb10-finetune").string(), "sample", "--gpu", "nvml",
       "--count", "4", "--interval", "2", "--format", "jsonl", "--out", out.string()},
      test::fake_nvml_env(
          "hang-after-1",
          {{"SPARKOPS_CONFIG", short_timeout_config(tmp, "1s").string()}, {"TZ", "UTC"}}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::size_t rows = 0, with_gpu = 0;
  // split_lines returns views: the text must outlive the loop. (It was a temporary in the range
  // expression, destroyed before the first iteration in C++20: the views read freed memory, which
  // is why this test lost rows and the GPU reading about one run in two.)
  const std::string text = test::slurp(out);
  for (auto line : split_lines(text)) {
    const auto row = nlohmann::json::parse(line, nullptr, false);
    if (row.is_discarded() || !row.is_object() || !row.contains("mem_available_bytes")) continue;
    ++rows;
    EXPECT_FALSE(row["mem_available_bytes"].is_null()) << line;
    if (!row["gpu_temp_c"].is_null()) ++with_gpu;
  }
  EXPECT_EQ(rows, 4U) << text << r.err;
  EXPECT_EQ(with_gpu, 1U);  // tick 1 answered; the rest were hung
  const auto events = test::slurp(fs::path(out.string() + ".events"));
  EXPECT_NE(events.find("start cause=gpu_hung"), std::string::npos) << events;
}

TEST(GpuHang, MetricsSayHungAndCountTheEpisode) {
  status::StatusReport ok;
  ok.gpu.backend = "nvml";
  ok.gpu.state = gpu::GpuState::ok;
  status::StatusReport hung = ok;
  hung.gpu.state = gpu::GpuState::hung;
  exporter::EventTracker tracker;
  tracker.observe(ok, SteadyTime{std::chrono::seconds{0}});
  tracker.observe(hung, SteadyTime{std::chrono::seconds{5}});
  tracker.observe(hung, SteadyTime{std::chrono::seconds{10}});
  const auto text = exporter::render_metrics(hung, tracker.totals(), exporter::MetricsOptions{});
  EXPECT_NE(text.find("sparkops_gpu_hung{backend=\"nvml\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("sparkops_gpu_source_info{backend=\"nvml\",state=\"hung\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("sparkops_gpu_hang_events_total 1\n"), std::string::npos);
  const auto healthy =
      exporter::render_metrics(ok, exporter::EventTotals{}, exporter::MetricsOptions{});
  EXPECT_NE(healthy.find("sparkops_gpu_hung{backend=\"nvml\"} 0\n"), std::string::npos);
}

}  // namespace
}  // namespace sparkops
