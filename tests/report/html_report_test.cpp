// The HTML report is one self-contained file, and it renders in headless Chromium (Debian
// `chromium`, installed by tools/install-deps.sh --test): the page script reports how many charts
// it drew, how many canvases hold pixels and how many errors it saw. SPARKOPS_SKIP_BROWSER=1 skips
// the browser test; a missing browser otherwise fails it.

#include <cstdlib>
#include <filesystem>
#include <regex>

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
  const auto run = test::analysed_run();
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
      R"re(id="render-status" data-charts="(\d+)" data-nonempty="(\d+)" data-errors="(\d+)")re");
  ASSERT_TRUE(std::regex_search(dom.out, m, status)) << dom.out.substr(0, 2000);
  EXPECT_EQ(m[1].str(), "5");  // step time, temperature, power, SM clock, available memory
  EXPECT_EQ(m[2].str(), "5");
  EXPECT_EQ(m[3].str(), "0");
  EXPECT_NE(dom.out.find("<title>rendered:ok</title>"), std::string::npos);

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
