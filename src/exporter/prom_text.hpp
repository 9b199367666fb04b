#pragma once
// Prometheus text exposition format 0.0.4
// (https://prometheus.io/docs/instrumenting/exposition_formats/): one `# HELP` and one `# TYPE`
// line per family, then its samples. Pure and locale-free.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sparkops::exporter {

enum class MetricType { gauge, counter };

std::string_view metric_type_name(MetricType type);

struct Label {
  std::string name;
  std::string value;
};

struct MetricSample {
  std::vector<Label> labels;
  double value = 0;
};

struct MetricFamily {
  std::string name;
  MetricType type = MetricType::gauge;
  std::string help;
  std::vector<MetricSample> samples;
};

// The format allows any UTF-8 in label values and HELP text: ill-formed bytes are replaced first
// (base/utf8.hpp), then label values escape backslash, double quote and newline; HELP text escapes
// backslash and newline.
std::string escape_label_value(std::string_view value);
std::string escape_help(std::string_view help);
// Shortest round-trip decimal form; integers up to 2^53 print without exponent or ".0";
// NaN -> "NaN", infinities -> "+Inf"/"-Inf".
std::string format_sample_value(double value);

// True when `name` matches [a-zA-Z_:][a-zA-Z0-9_:]* (metric names) or, for labels,
// [a-zA-Z_][a-zA-Z0-9_]* and does not start with "__".
bool is_valid_metric_name(std::string_view name);
bool is_valid_label_name(std::string_view name);

// Families with no samples are skipped entirely (no HELP/TYPE for a series that is absent).
// Families are written in the order given; samples in the order given.
std::string render_exposition(const std::vector<MetricFamily>& families);

}  // namespace sparkops::exporter
