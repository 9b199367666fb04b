#include "exporter/prom_text.hpp"

#include <gtest/gtest.h>

namespace sparkops::exporter {
namespace {

TEST(PromTextEscape, LabelValueEscapesBackslashQuoteAndNewline) {
  EXPECT_EQ(escape_label_value("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
  EXPECT_EQ(escape_label_value("python3 train.py"), "python3 train.py");
}

TEST(PromTextEscape, HelpEscapesBackslashAndNewlineButNotQuotes) {
  EXPECT_EQ(escape_help("a\\b\n\"c\""), "a\\\\b\\n\"c\"");
}

TEST(PromTextValue, IntegersPrintWithoutExponentOrDecimalPoint) {
  EXPECT_EQ(format_sample_value(128526278656.0), "128526278656");
  EXPECT_EQ(format_sample_value(0), "0");
  EXPECT_EQ(format_sample_value(-3), "-3");
}

TEST(PromTextValue, FractionsUseShortestRoundTripForm) {
  EXPECT_EQ(format_sample_value(11.23), "11.23");
  EXPECT_EQ(format_sample_value(0.005), "0.005");
}

TEST(PromTextValue, SpecialValuesUsePrometheusSpelling) {
  EXPECT_EQ(format_sample_value(std::numeric_limits<double>::quiet_NaN()), "NaN");
  EXPECT_EQ(format_sample_value(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(format_sample_value(-std::numeric_limits<double>::infinity()), "-Inf");
}

TEST(PromTextNames, MetricAndLabelNameRules) {
  EXPECT_TRUE(is_valid_metric_name("sparkops_pool_total_bytes"));
  EXPECT_TRUE(is_valid_metric_name("job:rate5m"));
  EXPECT_FALSE(is_valid_metric_name("9lives"));
  EXPECT_FALSE(is_valid_metric_name("pool-total"));
  EXPECT_FALSE(is_valid_metric_name(""));
  EXPECT_TRUE(is_valid_label_name("gpu"));
  EXPECT_FALSE(is_valid_label_name("__name__"));
  EXPECT_FALSE(is_valid_label_name("a:b"));
}

TEST(PromTextRender, WritesHelpTypeThenSamples) {
  std::vector<MetricFamily> families = {
      {"x_bytes", MetricType::gauge, "Some bytes.", {{{}, 5}}},
      {"y_total", MetricType::counter, "Events.", {{{{"gpu", "0"}, {"reason", "a\"b"}}, 2}}},
  };
  EXPECT_EQ(
      render_exposition(families),
      "# HELP x_bytes Some bytes.\n# TYPE x_bytes gauge\nx_bytes 5\n"
      "# HELP y_total Events.\n# TYPE y_total counter\ny_total{gpu=\"0\",reason=\"a\\\"b\"} 2\n");
}

TEST(PromTextRender, FamilyWithoutSamplesIsOmittedEntirely) {
  std::vector<MetricFamily> families = {{"x_bytes", MetricType::gauge, "Some bytes.", {}}};
  EXPECT_EQ(render_exposition(families), "");
}

}  // namespace
}  // namespace sparkops::exporter
