// deploy/prometheus/sparkops-rules.yml: promtool accepts it, its unit tests on synthetic series
// pass (tests/fixtures/prometheus/sparkops-rules.test.yml), it only names exported metrics, and
// every alert carries a severity and the two annotations Alertmanager templates use.

#include <cstdlib>
#include <regex>
#include <set>

#include <gtest/gtest.h>

#include "base/text.hpp"
#include "exporter/metric_catalogue.hpp"
#include "support/test_support.hpp"

namespace sparkops::exporter {
namespace {

const std::filesystem::path kSource(SPARKOPS_SOURCE_DIR);
const std::filesystem::path kRules = kSource / "deploy" / "prometheus" / "sparkops-rules.yml";
const std::filesystem::path kRuleTests =
    kSource / "tests" / "fixtures" / "prometheus" / "sparkops-rules.test.yml";

bool skip_prometheus() {
  const char* v = std::getenv("SPARKOPS_SKIP_PROMETHEUS");
  return v != nullptr && std::string_view(v) == "1";
}

TEST(PrometheusRules, PromtoolChecksThem) {
  if (skip_prometheus()) GTEST_SKIP() << "SPARKOPS_SKIP_PROMETHEUS=1";
  ASSERT_TRUE(std::filesystem::exists("/usr/bin/promtool")) << "run tools/install-deps.sh --test";
  const auto r = test::run_process({"/usr/bin/promtool", "check", "rules", kRules.string()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("SUCCESS"), std::string::npos) << r.out;
}

TEST(PrometheusRules, UnitTestsOnSyntheticSeriesPass) {
  if (skip_prometheus()) GTEST_SKIP() << "SPARKOPS_SKIP_PROMETHEUS=1";
  ASSERT_TRUE(std::filesystem::exists("/usr/bin/promtool")) << "run tools/install-deps.sh --test";
  const auto r = test::run_process({"/usr/bin/promtool", "test", "rules", kRuleTests.string()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST(PrometheusRules, NameOnlyExportedMetrics) {
  std::set<std::string> exported;
  for (const auto& def : metric_catalogue()) exported.insert(std::string(def.name));
  const std::string text = test::slurp(kRules);
  const std::regex metric(R"(\bsparkops_[a-z0-9_]+)");
  std::size_t seen = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), metric);
       it != std::sregex_iterator(); ++it, ++seen) {
    EXPECT_TRUE(exported.count(it->str())) << it->str() << " is not in the metric catalogue";
  }
  EXPECT_GT(seen, 20U);
}

// Every alert, and every alert the unit tests exercise, is the same set: no rule goes untested.
TEST(PrometheusRules, EveryAlertHasSeverityAnnotationsAndATest) {
  const std::string text = test::slurp(kRules);
  const std::string tests = test::slurp(kRuleTests);
  const std::regex alert(R"(- alert: (\w+))");
  std::size_t alerts = 0;
  auto begin = std::sregex_iterator(text.begin(), text.end(), alert);
  for (auto it = begin; it != std::sregex_iterator(); ++it, ++alerts) {
    const auto from = static_cast<std::size_t>(it->position());
    auto next = std::next(it);
    const std::size_t to =
        next == std::sregex_iterator() ? text.size() : static_cast<std::size_t>(next->position());
    const std::string block = text.substr(from, to - from);
    const std::string name = (*it)[1].str();
    EXPECT_TRUE(std::regex_search(block, std::regex(R"(severity: (critical|warning|info)\n)")))
        << name;
    EXPECT_NE(block.find("summary:"), std::string::npos) << name;
    EXPECT_NE(block.find("description:"), std::string::npos) << name;
    EXPECT_NE(tests.find("alertname: " + name + "\n"), std::string::npos)
        << name << " has no firing case in the rule tests";
  }
  EXPECT_GE(alerts, 15U);
}

}  // namespace
}  // namespace sparkops::exporter
