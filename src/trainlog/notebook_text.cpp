#include "trainlog/notebook_text.hpp"

#include <charconv>
#include <string>
#include <vector>

#include "base/text.hpp"
#include "trainlog/log_text.hpp"

namespace sparkops::trainlog {

namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

std::optional<std::int64_t> whole_number(std::string_view s) {
  if (s.empty() || s.size() > 18) return std::nullopt;
  std::int64_t v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

// The cells of a copied table row: split on tabs when the line has any, else on runs of spaces,
// with the two words of "No log" kept as one cell.
std::vector<std::string_view> cells(std::string_view line) {
  std::vector<std::string_view> out;
  if (line.find('\t') != std::string_view::npos) {
    std::size_t p = 0;
    while (p <= line.size()) {
      const std::size_t tab = std::min(line.find('\t', p), line.size());
      out.push_back(trim(line.substr(p, tab - p)));
      p = tab + 1;
    }
    return out;
  }
  std::size_t p = 0;
  while (p < line.size()) {
    while (p < line.size() && line[p] == ' ') ++p;
    if (p >= line.size()) break;
    std::size_t e = p;
    while (e < line.size() && line[e] != ' ') ++e;
    std::string_view cell = line.substr(p, e - p);
    if (cell == "No" && line.substr(e, 4) == " log") {
      cell = line.substr(p, e + 4 - p);
      e += 4;
    }
    out.push_back(cell);
    p = e;
  }
  return out;
}

}  // namespace

std::optional<NotebookLabel> parse_notebook_label(std::string_view line) {
  if (line.size() < 5 || line.front() != '[' || line.back() != ']') return std::nullopt;
  std::string_view s = line.substr(1, line.size() - 2);
  std::size_t p = 0;
  while (p < s.size() && s[p] == ' ') ++p;
  const std::size_t slash = s.find('/', p);
  if (slash == std::string_view::npos) return std::nullopt;
  const auto value = whole_number(s.substr(p, slash - p));
  std::size_t t = slash + 1;
  while (t < s.size() && is_digit(s[t])) ++t;
  const auto total = whole_number(s.substr(slash + 1, t - slash - 1));
  if (!value || !total || *total == 0 || *value > *total || t >= s.size() || s[t] != ' ')
    return std::nullopt;
  NotebookLabel label;
  label.value = *value;
  label.total = *total;
  std::string_view rest = s.substr(t + 1);
  if (starts_with(rest, ": < :")) return label;  // the first display, before any time
  const std::size_t clock_end = std::min(rest.find_first_of(" ,"), rest.size());
  label.elapsed_seconds = parse_clock_seconds(rest.substr(0, clock_end));
  if (!label.elapsed_seconds) return std::nullopt;
  rest = rest.substr(clock_end);
  if (starts_with(rest, " < ")) {
    const std::size_t rate_at = rest.find(", ");
    const std::size_t unit_at = rest.find(" it/s");
    if (rate_at == std::string_view::npos || unit_at == std::string_view::npos || unit_at < rate_at)
      return std::nullopt;
    label.rate_per_second = parse_decimal(rest.substr(rate_at + 2, unit_at - rate_at - 2));
    if (!label.rate_per_second) return std::nullopt;
  }
  return label;
}

std::optional<NotebookColumns> parse_notebook_header(std::string_view line) {
  // Detection asks this of every line it reads: nothing is split unless the first cell can match.
  if (!starts_with(line, "Step") && !starts_with(line, "Epoch")) return std::nullopt;
  const auto names = cells(line);
  if (names.size() < 2 || (names[0] != "Step" && names[0] != "Epoch")) return std::nullopt;
  NotebookColumns c;
  if (line.find('\t') != std::string_view::npos) {
    if (names[1] != "Training Loss") return std::nullopt;
    c.count = names.size();
    for (std::size_t i = 2; i < names.size(); ++i) {
      if (names[i] == "Validation Loss") c.validation_loss = i;
    }
    return c;
  }
  // Spaces only: "Step Training Loss" or "Step Training Loss Validation Loss" (words split).
  if (names.size() == 3 && names[1] == "Training" && names[2] == "Loss") {
    c.count = 2;
    return c;
  }
  if (names.size() == 5 && names[1] == "Training" && names[2] == "Loss" &&
      names[3] == "Validation" && names[4] == "Loss") {
    c.count = 3;
    c.validation_loss = 2;
    return c;
  }
  return std::nullopt;
}

std::optional<NotebookRow> parse_notebook_row(std::string_view line,
                                              const NotebookColumns& columns) {
  const auto values = cells(line);
  if (values.size() != columns.count || columns.count < 2) return std::nullopt;
  const auto step = whole_number(values[0]);
  if (!step) return std::nullopt;
  const auto loss_of = [](std::string_view cell, bool& ok) -> std::optional<double> {
    if (cell == "No log") return std::nullopt;
    const auto v = parse_double(cell);
    ok = ok && v.has_value();
    return v;
  };
  bool ok = true;
  NotebookRow row;
  row.step = *step;
  row.training_loss = loss_of(values[columns.training_loss], ok);
  if (columns.validation_loss) row.validation_loss = loss_of(values[*columns.validation_loss], ok);
  if (!ok) return std::nullopt;
  return row;
}

}  // namespace sparkops::trainlog
