// `sparkops serve` checked by the real engines: promtool, a Prometheus server scraping two
// instances, and headless Chromium rendering the dashboard. They run unless
// SPARKOPS_SKIP_PROMETHEUS=1 / SPARKOPS_SKIP_BROWSER=1 (tools/install-deps.sh --test installs
// them).

#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/text.hpp"
#include "serve_harness.hpp"

namespace sparkops::exporter {
namespace {

using namespace std::chrono_literals;

std::string require_tool(const char* path, const char* skip_env) {
  if (test::env_set(skip_env)) return {};
  EXPECT_TRUE(std::filesystem::exists(path))
      << path << " missing: run tools/install-deps.sh --test (or set " << skip_env << "=1)";
  return std::filesystem::exists(path) ? path : "";
}

std::uint64_t mem_available_bytes(const std::string& root) {
  const std::string text = test::slurp(test::fixture("roots/" + root + "/proc/meminfo"));
  for (const auto line : split_lines(text)) {
    const auto fields = split_ws(line);
    if (fields.size() >= 2 && fields[0] == "MemAvailable:")
      return parse_u64(fields[1]).value_or(0) * 1024;
  }
  return 0;
}

TEST(ServeEngines, PromtoolAcceptsTheExposition) {
  if (test::env_set("SPARKOPS_SKIP_PROMETHEUS")) GTEST_SKIP() << "SPARKOPS_SKIP_PROMETHEUS=1";
  const auto promtool = require_tool("/usr/bin/promtool", "SPARKOPS_SKIP_PROMETHEUS");
  ASSERT_FALSE(promtool.empty());
  test::TempDir logs;
  auto s = test::start_serve(logs.path(), "gb10-finetune", "gb10");
  ASSERT_GT(s.port, 0);
  auto metrics = test::http_get(s.port, "/metrics");
  ASSERT_TRUE(metrics);
  const auto r = test::run_process({promtool, "check", "metrics"}, {}, metrics->body);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

// A GB10 (fake NVML: memory info NOT_SUPPORTED) served with --dcgm-compat: DCGM's names appear,
// the framebuffer fields come from the pool (FB_FREE is MemAvailable in MiB), and promtool's only
// findings are the lint DCGM's own names carry.
TEST(ServeEngines, DcgmCompatOnAGb10) {
  if (test::env_set("SPARKOPS_SKIP_PROMETHEUS")) GTEST_SKIP() << "SPARKOPS_SKIP_PROMETHEUS=1";
  const auto promtool = require_tool("/usr/bin/promtool", "SPARKOPS_SKIP_PROMETHEUS");
  ASSERT_FALSE(promtool.empty());
  test::TempDir logs;
  auto s = test::start_serve(logs.path(), "gb10-finetune", "gb10", {"--dcgm-compat"});
  ASSERT_GT(s.port, 0);
  auto metrics = test::http_get(s.port, "/metrics");
  ASSERT_TRUE(metrics);
  const std::string& body = metrics->body;
  EXPECT_NE(body.find("# TYPE DCGM_FI_DEV_GPU_TEMP gauge\n"), std::string::npos) << body;
  EXPECT_NE(body.find("DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\""), std::string::npos);
  EXPECT_EQ(body.find("sparkops_gpu_memory_total_bytes"), std::string::npos);  // GB10: absent
  const std::string fb_free = "\nDCGM_FI_DEV_FB_FREE{";
  const auto at = body.find(fb_free);
  ASSERT_NE(at, std::string::npos) << body;
  const auto value_at = body.find("} ", at) + 2;
  const auto mib = parse_u64(body.substr(value_at, body.find('\n', value_at) - value_at));
  ASSERT_TRUE(mib.has_value());
  EXPECT_EQ(*mib, mem_available_bytes("gb10-finetune") >> 20);
  const auto r = test::run_process({promtool, "check", "metrics"}, {}, body);
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.out << r.err;
  const std::string findings = r.out + r.err;
  for (const auto line : split_lines(findings)) {
    if (trim(line).empty()) continue;
    EXPECT_TRUE(starts_with(line, "DCGM_FI_")) << line;
  }
}

TEST(ServeEngines, PrometheusScrapesTwoSparks) {
  if (test::env_set("SPARKOPS_SKIP_PROMETHEUS")) GTEST_SKIP() << "SPARKOPS_SKIP_PROMETHEUS=1";
  const auto prometheus = require_tool("/usr/bin/prometheus", "SPARKOPS_SKIP_PROMETHEUS");
  ASSERT_FALSE(prometheus.empty());
  test::TempDir dir;
  const std::vector<std::pair<std::string, std::string>> sparks = {
      {"gb10-idle", "gb10"}, {"gb10-finetune", "gb10-counters-advancing"}};
  std::vector<test::ServeInstance> serves;
  for (const auto& [root, scenario] : sparks) {
    serves.push_back(test::start_serve(dir.path(), root, scenario, {"--interval", "1s"}));
    ASSERT_GT(serves.back().port, 0);
  }
  const int prom_port = test::free_loopback_port();
  test::write_text(dir / "prometheus.yml",
                   "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n"
                   "  - job_name: sparkops\n    static_configs:\n      - targets: ['127.0.0.1:" +
                       std::to_string(serves[0].port) + "']\n        labels: {spark: '" +
                       sparks[0].first +
                       "'}\n      - targets: ['127.0.0.1:" + std::to_string(serves[1].port) +
                       "']\n        labels: {spark: '" + sparks[1].first + "'}\n");
  test::BackgroundProcess prom({prometheus, "--config.file=" + (dir / "prometheus.yml").string(),
                                "--storage.tsdb.path=" + (dir / "data").string(),
                                "--web.listen-address=127.0.0.1:" + std::to_string(prom_port)},
                               {}, dir.path());
  ASSERT_TRUE(prom.wait_for_output("Server is ready to receive web requests", 60s))
      << prom.output();

  // Polls an instant query until it returns one series per Spark (bounded: 60 s).
  const auto query = [&](const std::string& promql) {
    nlohmann::json result = nlohmann::json::array();
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (std::chrono::steady_clock::now() < deadline) {
      httplib::Client client("127.0.0.1", prom_port);
      client.set_read_timeout(5s);
      auto r = client.Get("/api/v1/query", httplib::Params{{"query", promql}}, httplib::Headers{});
      if (r && r->status == 200) {
        const auto doc = nlohmann::json::parse(r->body, nullptr, false);
        if (!doc.is_discarded() && doc["status"] == "success" &&
            doc["data"]["result"].size() == 2) {
          return doc["data"]["result"];
        }
      }
      std::this_thread::sleep_for(500ms);
    }
    return result;
  };

  const auto temps = query("sparkops_gpu_temperature_celsius{gpu=\"0\"}");
  ASSERT_EQ(temps.size(), 2U) << prom.output();
  for (const auto& series : temps) {
    EXPECT_EQ(series["value"][1], "81") << series.dump();
  }
  const auto available = query("sparkops_pool_available_bytes");
  ASSERT_EQ(available.size(), 2U);
  for (const auto& series : available) {
    const std::string spark = series["metric"]["spark"];
    EXPECT_EQ(series["value"][1], std::to_string(mem_available_bytes(spark))) << series.dump();
  }
  EXPECT_EQ(prom.stop(), 0) << prom.output();
  for (auto& s : serves) EXPECT_EQ(s.process->stop(), 0);
}

TEST(ServeEngines, DashboardRendersLiveDataInHeadlessChromium) {
  if (test::env_set("SPARKOPS_SKIP_BROWSER")) GTEST_SKIP() << "SPARKOPS_SKIP_BROWSER=1";
  const auto chromium = require_tool("/usr/bin/chromium", "SPARKOPS_SKIP_BROWSER");
  ASSERT_FALSE(chromium.empty());
  test::TempDir dir;
  auto s = test::start_serve(dir.path(), "gb10-finetune", "gb10", {"--interval", "1s"});
  ASSERT_GT(s.port, 0);
  // Two readings so the charts have a line, not a point (bounded: 20 s).
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (std::chrono::steady_clock::now() < deadline) {
    auto h = test::http_get(s.port, "/api/history");
    if (h && nlohmann::json::parse(h->body)["time"].size() >= 2) break;
    std::this_thread::sleep_for(250ms);
  }
  const std::string url = "http://127.0.0.1:" + std::to_string(s.port) + "/";
  const auto png = test::artefact_dir() / "dashboard.png";
  std::filesystem::remove(png);
  const std::vector<std::string> common = {chromium,
                                           "--headless",
                                           "--no-sandbox",
                                           "--disable-gpu",
                                           "--disable-quic",
                                           "--no-first-run",
                                           "--disable-background-networking",
                                           "--disable-component-update",
                                           "--disable-sync",
                                           "--user-data-dir=" + (dir / "chromium").string(),
                                           "--virtual-time-budget=5000",
                                           "--window-size=1200,1300"};
  auto dom_args = common;
  dom_args.push_back("--dump-dom");
  dom_args.push_back(url);
  std::vector<std::string> bounded = {"/usr/bin/timeout", "120"};
  bounded.insert(bounded.end(), dom_args.begin(), dom_args.end());
  const auto dom = test::run_process(bounded);
  ASSERT_EQ(dom.exit_code, 0) << dom.err;
  EXPECT_NE(dom.out.find("class=\"uplot"), std::string::npos) << "no uPlot chart rendered";
  EXPECT_NE(dom.out.find("data-points=\""), std::string::npos) << "history never arrived";
  EXPECT_NE(dom.out.find("id=\"t-temp\">81 °C"), std::string::npos)
      << "live GPU temperature missing";
  // The status panel: throttle state, PROCHOT and the workloads table from /api/status.
  EXPECT_EQ(dom.out.find("id=\"t-throttle\">–"), std::string::npos) << "throttle state missing";
  EXPECT_EQ(dom.out.find("id=\"t-prochot\">–"), std::string::npos) << "PROCHOT missing";
  // gb10-finetune's captured /proc holds no workload: an empty table and the room verdict.
  EXPECT_NE(dom.out.find("data-workloads=\"0\""), std::string::npos) << "workloads never read";
  EXPECT_EQ(dom.out.find("id=\"coexistence\" class=\"muted\">–"), std::string::npos)
      << "coexistence line never filled";
  EXPECT_NE(dom.out.find("id=\"event-list\""), std::string::npos);

  auto shot_args = std::vector<std::string>{"/usr/bin/timeout", "120"};
  shot_args.insert(shot_args.end(), common.begin(), common.end());
  shot_args.push_back("--screenshot=" + png.string());
  shot_args.push_back(url);
  const auto shot = test::run_process(shot_args);
  ASSERT_EQ(shot.exit_code, 0) << shot.err;
  ASSERT_TRUE(std::filesystem::exists(png));
  EXPECT_GT(std::filesystem::file_size(png), 10000U) << "screenshot suspiciously small";
}

}  // namespace
}  // namespace sparkops::exporter
