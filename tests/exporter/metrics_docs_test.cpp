// docs/metrics.md is the user's reference: every documented name must be emitted by the code for a
// full report, and every emitted name must be documented, with the same type and labels.

#include <map>
#include <regex>
#include <set>

#include <gtest/gtest.h>

#include "base/text.hpp"
#include "exporter/metrics_builder.hpp"
#include "status_fixture.hpp"
#include "support/test_support.hpp"

namespace sparkops::exporter {
namespace {

struct DocRow {
  std::string type;
  std::string labels;  // "a,b"
};

// Rows look like: | `sparkops_gpu_power_watts` | gauge | `gpu` | GPU power draw ... |
std::map<std::string, DocRow> documented_metrics() {
  const std::string text =
      test::slurp(std::filesystem::path(SPARKOPS_SOURCE_DIR) / "docs" / "metrics.md");
  std::map<std::string, DocRow> out;
  for (const auto line : split_lines(text)) {
    const auto cells = split(line, '|');
    if (cells.size() < 5 || !starts_with(trim(cells[1]), "`sparkops_")) continue;
    std::string name(trim(cells[1]));
    name = name.substr(1, name.size() - 2);
    std::string labels;
    for (const auto label : split(trim(cells[3]), ',')) {
      auto l = trim(label);
      if (l.size() < 2) continue;
      labels += (labels.empty() ? "" : ",") + std::string(l.substr(1, l.size() - 2));
    }
    out[name] = DocRow{std::string(trim(cells[2])), labels};
  }
  return out;
}

std::map<std::string, const MetricFamily*> emitted(const std::vector<MetricFamily>& families) {
  std::map<std::string, const MetricFamily*> out;
  for (const auto& f : families) out[f.name] = &f;
  return out;
}

std::vector<MetricFamily> full_families() {
  EventTotals e;
  e.throttle = std::vector<EventCount>{{0, "sw_thermal", 1}};
  e.slowdown = std::vector<EventCount>{{0, "low_clock", 1}};
  e.contention = 1;
  MetricsOptions options;
  options.collect_duration_seconds = 0.01;
  options.collect_interval_seconds = 5;
  options.platform_ceiling_watts = 100;
  return build_metric_families(test::full_status_report(), e, options);
}

TEST(MetricsDocs, DocumentsSomeMetrics) {
  EXPECT_GT(documented_metrics().size(), 30U);
}

TEST(MetricsDocs, EveryDocumentedNameIsEmittedForAFullReport) {
  const auto families = full_families();
  const auto names = emitted(families);
  for (const auto& [name, row] : documented_metrics()) {
    EXPECT_TRUE(names.count(name)) << name << " is in docs/metrics.md but not emitted";
  }
}

TEST(MetricsDocs, EveryEmittedNameIsDocumentedWithItsTypeAndLabels) {
  const auto docs = documented_metrics();
  const auto families = full_families();
  for (const auto& f : families) {
    const auto it = docs.find(f.name);
    ASSERT_NE(it, docs.end()) << f.name << " is emitted but missing from docs/metrics.md";
    EXPECT_EQ(it->second.type, metric_type_name(f.type)) << f.name;
    std::string labels;
    for (const auto& l : f.samples.front().labels) labels += (labels.empty() ? "" : ",") + l.name;
    EXPECT_EQ(it->second.labels, labels) << f.name;
  }
}

}  // namespace
}  // namespace sparkops::exporter
