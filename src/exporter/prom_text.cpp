#include "exporter/prom_text.hpp"

#include <cmath>

#include <fmt/format.h>

#include "base/utf8.hpp"

namespace sparkops::exporter {

std::string_view metric_type_name(MetricType type) {
  switch (type) {
    case MetricType::gauge:
      return "gauge";
    case MetricType::counter:
      return "counter";
  }
  return "untyped";
}

std::string escape_label_value(std::string_view raw) {
  const std::string value = sanitize_utf8(raw);
  std::string out;
  out.reserve(value.size());
  for (const char c : value) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string escape_help(std::string_view raw) {
  const std::string help = sanitize_utf8(raw);
  std::string out;
  out.reserve(help.size());
  for (const char c : help) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string format_sample_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  constexpr double kExact = 9007199254740992.0;  // 2^53
  if (value == std::floor(value) && std::fabs(value) <= kExact) {
    return fmt::format("{}", static_cast<long long>(value));
  }
  return fmt::format("{}", value);
}

namespace {

bool name_char(char c, bool first, bool allow_colon) {
  const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  const bool digit = c >= '0' && c <= '9';
  return alpha || (allow_colon && c == ':') || (!first && digit);
}

bool valid_name(std::string_view name, bool allow_colon) {
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (!name_char(name[i], i == 0, allow_colon)) return false;
  }
  return true;
}

}  // namespace

bool is_valid_metric_name(std::string_view name) {
  return valid_name(name, true);
}

bool is_valid_label_name(std::string_view name) {
  return valid_name(name, false) && name.substr(0, 2) != "__";
}

std::string render_exposition(const std::vector<MetricFamily>& families) {
  std::string out;
  out.reserve(families.size() * 160);
  for (const auto& family : families) {
    if (family.samples.empty()) continue;
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", family.name, escape_help(family.help),
                       family.name, metric_type_name(family.type));
    for (const auto& sample : family.samples) {
      out += family.name;
      if (!sample.labels.empty()) {
        out += '{';
        for (std::size_t i = 0; i < sample.labels.size(); ++i) {
          if (i > 0) out += ',';
          out += sample.labels[i].name;
          out += "=\"";
          out += escape_label_value(sample.labels[i].value);
          out += '"';
        }
        out += '}';
      }
      out += ' ';
      out += format_sample_value(sample.value);
      out += '\n';
    }
  }
  return out;
}

}  // namespace sparkops::exporter
