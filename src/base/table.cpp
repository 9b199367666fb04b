#include "base/table.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace sparkops {

namespace {

bool continuation(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

// Byte offset just past the first `n` display columns of s.
std::size_t prefix_bytes(std::string_view s, std::size_t n) {
  std::size_t i = 0;
  for (std::size_t seen = 0; i < s.size(); ++i) {
    if (!continuation(s[i])) {
      if (seen == n) break;
      ++seen;
    }
  }
  return i;
}

// Byte offset where the last `n` display columns of s start.
std::size_t suffix_start(std::string_view s, std::size_t n) {
  std::size_t i = s.size();
  for (std::size_t seen = 0; i > 0 && seen < n;) {
    --i;
    if (!continuation(s[i])) ++seen;
  }
  return i;
}

void pad_to(std::string& line, std::string_view cell, std::size_t width, Align align) {
  const std::size_t w = display_width(cell);
  const std::string pad(width > w ? width - w : 0, ' ');
  if (align == Align::right) line += pad;
  line += cell;
  if (align == Align::left) line += pad;
}

}  // namespace

std::size_t display_width(std::string_view s) {
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return !continuation(c); }));
}

std::string elide_middle(std::string_view s, std::size_t width) {
  if (display_width(s) <= width) return std::string(s);
  if (width <= 3) return std::string(s.substr(0, prefix_bytes(s, width)));
  const std::size_t keep = width - 3;
  const std::size_t head = (keep + 1) / 2;
  const std::size_t tail = keep / 2;
  std::string out(s.substr(0, prefix_bytes(s, head)));
  out += "...";
  out += s.substr(suffix_start(s, tail));
  return out;
}

std::string left_out_note(const std::vector<std::string>& left_out, std::size_t width) {
  if (left_out.empty()) return "";
  return fmt::format("(left out to fit {} columns: {}; --json has every field)", width,
                     fmt::join(left_out, ", "));
}

Table::Table(std::vector<TableColumn> columns, std::string indent, std::size_t min_gap)
    : columns_(std::move(columns)), indent_(std::move(indent)), min_gap_(min_gap) {}

void Table::add_row(std::vector<std::string> cells) {
  cells.resize(columns_.size());
  rows_.push_back(std::move(cells));
}

std::string Table::render(std::optional<std::size_t> width) const {
  const std::size_t n = columns_.size();
  std::vector<std::size_t> natural(n);
  for (std::size_t c = 0; c < n; ++c) {
    natural[c] = display_width(columns_[c].header);
    for (const auto& row : rows_) natural[c] = std::max(natural[c], display_width(row[c]));
  }
  std::vector<bool> shown(n, true);
  std::vector<std::size_t> widths = natural;
  // One space between columns, two where a number follows text: "0.5  59.9 GiB", not "0.5 59.9
  // GiB".
  const auto gap_before = [&](std::size_t c, std::optional<std::size_t> previous) -> std::size_t {
    if (!previous) return 0;
    const std::size_t rule =
        columns_[*previous].align == Align::left && columns_[c].align == Align::right ? 2 : 1;
    return std::max(rule, min_gap_);
  };
  const auto gaps = [&] {
    std::size_t sum = 0;
    std::optional<std::size_t> previous;
    for (std::size_t c = 0; c < n; ++c) {
      if (!shown[c]) continue;
      sum += gap_before(c, previous);
      previous = c;
    }
    return sum;
  };
  left_out_.clear();
  if (width) {
    const auto narrowest = [&](std::size_t c) {
      if (!columns_[c].elide) return natural[c];
      return std::max(display_width(columns_[c].header),
                      std::min(natural[c], columns_[c].min_width));
    };
    const auto total = [&](const auto& column_width) {
      std::size_t sum = display_width(indent_);
      for (std::size_t c = 0; c < n; ++c) {
        if (shown[c]) sum += column_width(c);
      }
      return sum + gaps();
    };
    while (total(narrowest) > *width) {
      // The highest rank goes first; among equals, the rightmost.
      std::optional<std::size_t> victim;
      for (std::size_t c = 0; c < n; ++c) {
        if (!shown[c] || columns_[c].drop_rank == 0) continue;
        if (!victim || columns_[c].drop_rank >= columns_[*victim].drop_rank) victim = c;
      }
      if (!victim) break;
      shown[*victim] = false;
      left_out_.push_back(columns_[*victim].header);
    }
    for (std::size_t c = 0; c < n; ++c) widths[c] = narrowest(c);
    std::size_t used = total([&](std::size_t c) { return widths[c]; });
    // Elided columns grow back, left to right, into what the width leaves.
    for (std::size_t c = 0; c < n && used < *width; ++c) {
      if (!shown[c] || !columns_[c].elide) continue;
      const std::size_t grow = std::min(natural[c] - widths[c], *width - used);
      widths[c] += grow;
      used += grow;
    }
  }
  std::string out;
  const auto emit = [&](const std::vector<std::string>& cells, bool header) {
    std::string line = indent_;
    std::optional<std::size_t> previous;
    for (std::size_t c = 0; c < n; ++c) {
      if (!shown[c]) continue;
      line.append(gap_before(c, previous), ' ');
      previous = c;
      const std::string cell = header ? cells[c] : elide_middle(cells[c], widths[c]);
      pad_to(line, cell, widths[c], columns_[c].align);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line;
    out += '\n';
  };
  std::vector<std::string> headers;
  for (const auto& col : columns_) headers.push_back(col.header);
  emit(headers, true);
  for (const auto& row : rows_) emit(row, false);
  return out;
}

}  // namespace sparkops
