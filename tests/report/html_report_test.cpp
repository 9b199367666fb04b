// The HTML report is one self-contained file, and it renders in headless Chromium (Debian
// `chromium`, installed by tools/install-deps.sh --test): the page script reports how many charts
// it drew, how many canvases hold pixels and how many errors it saw. SPARKOPS_SKIP_BROWSER=1 skips
// the browser test; a missing browser otherwise fails it.

#include <cstdlib>
#include <filesystem>
#include <regex>

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include "report/html_report.hpp"
#include "report/report_fixture.hpp"
#include "support/test_support.hpp"

namespace sparkops::report {
namespace {

TEST(HtmlReport, IsSelfContained) {
  const auto run = test::analysed_run();
  const std::string html = render_html_report("train.log", run.series, run.diagnosis, &run.thermal);
  EXPECT_NE(html.find("uPlot"), std::string::npos);
  EXPECT_NE(html.find("id=\"sparkops-data\""), std::string::npos);
  EXPECT_EQ(html.find("<script src"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("url(http"), std::string::npos);
  EXPECT_EQ(html.find("fetch("), std::string::npos);
}

TEST(HtmlReport, ScriptTextCannotCloseTheScriptElement) {
  auto run = test::analysed_run();
  run.series.markers.push_back(
      {trainlog::MarkerKind::eval, 1, std::nullopt, std::nullopt, "</script><b>x"});
  const auto d = diagnose::diagnose(run.series, &run.thermal, diagnose::DiagnoseOptions{});
  const std::string html = render_html_report("a</script>.log", run.series, d, &run.thermal);
  // Only the three real closing tags.
  std::size_t count = 0;
  for (auto p = html.find("</script>"); p != std::string::npos; p = html.find("</script>", p + 1))
    ++count;
  EXPECT_EQ(count, 3u);
}

// The JSON the page draws from, parsed back out of the <script id="sparkops-data"> element.
nlohmann::json page_data(const std::string& html) {
  const std::string open = "<script id=\"sparkops-data\" type=\"application/json\">";
  const auto a = html.find(open);
  const auto b = html.find("</script>", a);
  return nlohmann::json::parse(html.substr(a + open.size(), b - a - open.size()));
}

// Gives the synthetic run a falling loss, as an HF Trainer log prints with each logging step.
test::AnalysedRun run_with_loss() {
  auto run = test::analysed_run();
  double loss = 2.5;
  for (auto& r : run.series.steps) {
    r.loss = loss;
    loss *= 0.995;
  }
  return run;
}

TEST(HtmlReport, EveryChartSharesOneRangeCoveringLogAndSamples) {
  const auto run = test::analysed_run();
  const auto data =
      page_data(render_html_report("train.log", run.series, run.diagnosis, &run.thermal));
  ASSERT_TRUE(data["charts"]["x_range"].is_array());
  const double lo = data["charts"]["x_range"][0], hi = data["charts"]["x_range"][1];
  for (const char* key : {"step_x", "thermal_x"}) {
    for (const auto& x : data["charts"][key]) {
      EXPECT_LE(lo, x.get<double>()) << key;
      EXPECT_GE(hi, x.get<double>()) << key;
    }
  }
  EXPECT_EQ(lo, std::min(data["charts"]["step_x"].front().get<double>(),
                         data["charts"]["thermal_x"].front().get<double>()));
}

TEST(HtmlReport, ThrottleEpisodesBecomeBandsWithTheirReason) {
  const auto run = test::analysed_run();
  const auto data =
      page_data(render_html_report("train.log", run.series, run.diagnosis, &run.thermal));
  const auto& bands = data["charts"]["throttle"];
  ASSERT_EQ(bands.size(), 1u);  // the one thermal episode of the synthetic run, merged
  EXPECT_EQ(bands[0]["label"], "sw_thermal");
  EXPECT_LT(bands[0]["from"].get<double>(), bands[0]["to"].get<double>());
  // The band covers the slowdown it explains.
  const auto& slow = data["charts"]["slowdowns"];
  ASSERT_FALSE(slow.empty());
  EXPECT_LE(bands[0]["from"].get<double>(), slow[0]["to"].get<double>());
  EXPECT_GE(bands[0]["to"].get<double>(), slow[0]["from"].get<double>());
}

TEST(HtmlReport, LossAndOffsetTravelToThePage) {
  const auto run = run_with_loss();
  ReportOptions options;
  options.utc_offset = std::chrono::minutes(-330);
  const auto data =
      page_data(render_html_report("train.log", run.series, run.diagnosis, &run.thermal, options));
  EXPECT_EQ(data["charts"]["utc_offset_minutes"], -330);
  ASSERT_EQ(data["charts"]["loss"].size(), data["charts"]["step_x"].size());
  EXPECT_DOUBLE_EQ(data["charts"]["loss"][0].get<double>(), 2.5);
  // A log that prints no loss (the synthetic trace's dicts carry one, which the parser now reads).
  auto plain = test::analysed_run();
  for (auto& r : plain.series.steps) r.loss.reset();
  const auto without =
      page_data(render_html_report("train.log", plain.series, plain.diagnosis, &plain.thermal));
  for (const auto& v : without["charts"]["loss"]) EXPECT_TRUE(v.is_null());
}

std::string find_chromium() {
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (std::filesystem::exists(p)) return p;
  }
  return {};
}

TEST(HtmlReport, RendersInHeadlessChromium) {
  if (const char* skip = std::getenv("SPARKOPS_SKIP_BROWSER"); skip && std::string(skip) == "1") {
    GTEST_SKIP() << "SPARKOPS_SKIP_BROWSER=1";
  }
  const std::string browser = find_chromium();
  ASSERT_FALSE(browser.empty())
      << "chromium not installed (tools/install-deps.sh --test installs it)";
  const auto run = run_with_loss();
  const std::string html = render_html_report("train.log", run.series, run.diagnosis, &run.thermal);
  test::TempDir dir;
  const auto page = dir / "report.html";
  test::write_text(page, html);
  const std::vector<std::string> common = {browser,
                                           "--headless",
                                           "--no-sandbox",
                                           "--disable-gpu",
                                           "--disable-quic",
                                           "--no-first-run",
                                           "--disable-background-networking",
                                           "--disable-component-update",
                                           "--disable-sync",
                                           "--user-data-dir=" + (dir / "profile").string(),
                                           "--virtual-time-budget=10000",
                                           "--window-size=1280,1400"};
  auto dom_args = common;
  dom_args.push_back("--dump-dom");
  dom_args.push_back("file://" + page.string());
  const auto dom = test::run_process(dom_args);
  ASSERT_EQ(dom.exit_code, 0) << dom.err;
  std::smatch m;
  const std::regex status(
      R"re(id="render-status" data-charts="(\d+)" data-nonempty="(\d+)" data-errors="(\d+)" )re"
      R"re(data-shared-range="(\d)" data-empty-legends="(\d+)" data-event-rows="(\d+)")re");
  ASSERT_TRUE(std::regex_search(dom.out, m, status)) << dom.out.substr(0, 2000);
  // step time, loss, temperature, power, SM clock, available memory
  EXPECT_EQ(m[1].str(), "6");
  EXPECT_EQ(m[2].str(), "6");
  EXPECT_EQ(m[3].str(), "0");
  EXPECT_EQ(m[4].str(), "1") << "every chart shows the same x range";
  EXPECT_EQ(m[5].str(), "0") << "legends show values before any hover";
  // Two slowdowns, an eval, a checkpoint and the throttle episode.
  EXPECT_EQ(std::stoul(m[6].str()),
            run.diagnosis.slowdowns.size() + run.diagnosis.pauses.size() + 1);
  EXPECT_NE(dom.out.find("<title>rendered:ok</title>"), std::string::npos);
  EXPECT_NE(dom.out.find("id=\"event-key\""), std::string::npos);
  EXPECT_NE(dom.out.find("id=\"event-table\""), std::string::npos);
  EXPECT_NE(dom.out.find("Training loss"), std::string::npos);
  EXPECT_NE(dom.out.find("labelled in UTC"), std::string::npos);

  // Keep a screenshot as a test artefact in the build directory.
  const auto shot =
      std::filesystem::path(SPARKOPS_BUILD_DIR) / "test-artifacts" / "analyze-report.png";
  std::filesystem::create_directories(shot.parent_path());
  auto shot_args = common;
  shot_args.back() = "--window-size=1280,1400";
  shot_args.push_back("--screenshot=" + shot.string());
  shot_args.push_back("file://" + page.string());
  const auto snap = test::run_process(shot_args);
  EXPECT_EQ(snap.exit_code, 0) << snap.err;
  EXPECT_TRUE(std::filesystem::exists(shot));
  EXPECT_GT(std::filesystem::file_size(shot), 10000u);
}

}  // namespace
}  // namespace sparkops::report
