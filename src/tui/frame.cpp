#include "tui/frame.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include "base/checked_cast.hpp"
#include "base/utf8.hpp"
#include "term/colour.hpp"

namespace sparkops::tui {

namespace {

bool is_continuation(unsigned char c) {
  return (c & 0xC0U) == 0x80U;
}

}  // namespace

Line& Line::add(std::string text, Style style) {
  spans.push_back(Span{std::move(text), style});
  return *this;
}

std::size_t Line::width() const {
  std::size_t w = 0;
  for (const auto& s : spans) w += display_width(s.text);
  return w;
}

std::size_t display_width(std::string_view utf8) {
  std::size_t n = 0;
  for (const char c : utf8) n += is_continuation(static_cast<unsigned char>(c)) ? 0 : 1;
  return n;
}

std::string cut_to_width(std::string_view utf8, std::size_t columns) {
  std::size_t n = 0;
  std::size_t i = 0;
  for (; i < utf8.size(); ++i) {
    if (is_continuation(static_cast<unsigned char>(utf8[i]))) continue;
    if (n == columns) break;
    ++n;
  }
  return std::string(utf8.substr(0, i));
}

void fit(Frame& frame, std::size_t columns, std::size_t rows) {
  if (frame.size() > rows) frame.resize(rows);
  for (auto& line : frame) {
    std::size_t left = columns;
    std::vector<Span> kept;
    for (auto& span : line.spans) {
      if (left == 0) break;
      const std::size_t w = display_width(span.text);
      if (w > left) span.text = cut_to_width(span.text, left);
      left -= std::min(w, left);
      kept.push_back(std::move(span));
    }
    line.spans = std::move(kept);
  }
}

std::string printable(std::string_view untrusted) {
  // base's terminal rule first (ill-formed bytes and control characters become U+FFFD), then the
  // frame's width rule: every code point that is not printable ASCII becomes one '?', since East
  // Asian wide and combining characters would break the column arithmetic.
  const std::string safe = terminal_text(untrusted);
  std::string out;
  out.reserve(safe.size());
  for (const char c : safe) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x80U) {
      if (!is_continuation(u)) out += '?';
    } else {
      out += (u < 0x20U || u == 0x7FU) ? '?' : c;
    }
  }
  return out;
}

namespace {

// The tone a style paints in on a text terminal (the ncurses view maps the same styles to colour
// pairs in terminal_view.cpp).
std::optional<term::Tone> tone_of(Style style) {
  switch (style) {
    case Style::ok:
      return term::Tone::ok;
    case Style::warn:
      return term::Tone::warn;
    case Style::bad:
      return term::Tone::bad;
    case Style::title:
    case Style::heading:
      return term::Tone::heading;
    default:
      return std::nullopt;
  }
}

}  // namespace

std::string frame_to_text(const Frame& frame, bool colour) {
  std::string out;
  for (const auto& line : frame) {
    std::string text;
    for (const auto& s : line.spans) {
      const auto tone = tone_of(s.style);
      text += tone ? term::paint(s.text, *tone, colour) : s.text;
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out += text;
    out += '\n';
  }
  return out;
}

std::string sparkline(const std::vector<std::optional<double>>& values, double lo, double hi,
                      std::size_t columns, Glyphs glyphs) {
  static constexpr std::array<std::string_view, 8> kBlocks = {"▁", "▂", "▃", "▄",
                                                              "▅", "▆", "▇", "█"};
  static constexpr std::array<std::string_view, 8> kAscii = {"_", ".", "-", "=",
                                                             "+", "*", "#", "@"};
  const auto& set = glyphs == Glyphs::unicode ? kBlocks : kAscii;
  const std::size_t first = values.size() > columns ? values.size() - columns : 0;
  std::string out;
  for (std::size_t i = first; i < values.size(); ++i) {
    const auto& v = values[i];
    if (!v || !std::isfinite(*v)) {
      out += ' ';
      continue;
    }
    double f = hi > lo ? (*v - lo) / (hi - lo) : 0.0;
    f = std::clamp(f, 0.0, 1.0);
    const auto level = saturating_round<std::size_t>(f * 7.0);  // NaN (a NaN reading) is 0
    out += set[level];
  }
  return out;
}

}  // namespace sparkops::tui
