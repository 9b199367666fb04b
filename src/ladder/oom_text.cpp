#include "ladder/oom_text.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "base/checked_cast.hpp"
#include "base/utf8.hpp"

namespace sparkops::ladder::oomtext {
namespace {

bool is_line_break(char c) {
  return c == '\n' || c == '\r';
}

// Control bytes (NUL, escape sequences' ESC, form feeds) read as whitespace: binary junk and
// terminal colour codes must not glue words into false needles, nor split them.
bool is_space(char c) {
  const auto b = static_cast<unsigned char>(c);
  return b == ' ' || b < 0x20 || b == 0x7f;
}

// Line-leading markers removed before matching: shell/Python comments, C++ comments, e-mail and
// Markdown quotes, Markdown bullets/emphasis, Lisp/ini comments.
bool is_prefix_marker(char c) {
  return c == '#' || c == '/' || c == '>' || c == '*' || c == ';';
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_alpha(char c) {
  return c >= 'a' && c <= 'z';
}

struct Unit {
  std::string_view text;
  double decimal;
  double binary;
};

// Longest first, so "gib" wins over "gb" wins over "g" wins over "b".
constexpr Unit kUnits[] = {
    {"bytes", 1.0, 1.0},
    {"tib", 1099511627776.0, 1099511627776.0},
    {"gib", 1073741824.0, 1073741824.0},
    {"mib", 1048576.0, 1048576.0},
    {"kib", 1024.0, 1024.0},
    {"tb", 1e12, 1099511627776.0},
    {"gb", 1e9, 1073741824.0},
    {"mb", 1e6, 1048576.0},
    {"kb", 1e3, 1024.0},
    {"g", 1073741824.0, 1073741824.0},
    {"m", 1048576.0, 1048576.0},
    {"b", 1.0, 1.0},
};

std::optional<std::uint64_t> to_bytes(double value, double multiplier) {
  const double bytes = value * multiplier;
  if (!(bytes >= 0.0)) return std::nullopt;
  return checked_round<std::uint64_t>(bytes);
}

std::optional<double> parse_number(std::string_view s) {
  if (s.empty() || !is_digit(s.front())) return std::nullopt;
  double value = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc{} || ptr != s.data() + s.size()) return std::nullopt;
  return value;
}

}  // namespace

void DenseNormalizer::put(char c, DenseText& out) {
  char lower_byte = 0;
  char flag = 0;
  if (!classify(c, lower_byte, flag)) return;
  out.lower.push_back(lower_byte);
  out.orig.push_back(c);
  out.flags.push_back(flag);
}

bool DenseNormalizer::classify(char c, char& lower, char& flag) {
  if (is_line_break(c)) {
    pending_line_ = true;
    line_start_ = true;
    return false;
  }
  if (is_space(c) || (line_start_ && is_prefix_marker(c))) {
    pending_space_ = true;
    return false;
  }
  line_start_ = false;
  lower = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  unsigned char bits = 0;
  if (pending_space_ || pending_line_) bits |= kSpaceBefore;
  if (pending_line_) bits |= kLineStart;
  flag = static_cast<char>(bits);
  pending_space_ = false;
  pending_line_ = false;
  return true;
}

void DenseNormalizer::feed(std::string_view chunk, DenseText& out) {
  // Sized once per chunk and written through pointers: this loop sees every byte of a 1 GB log.
  const std::size_t old_size = out.lower.size();
  out.lower.resize(old_size + chunk.size() + 1);
  out.orig.resize(old_size + chunk.size() + 1);
  out.flags.resize(old_size + chunk.size() + 1);
  char* lower = out.lower.data() + old_size;
  char* orig = out.orig.data() + old_size;
  char* flags = out.flags.data() + old_size;
  std::size_t n = 0;
  const auto emit = [&](char c) {
    char l = 0;
    char f = 0;
    if (!classify(c, l, f)) return;
    lower[n] = l;
    orig[n] = c;
    flags[n] = f;
    ++n;
  };
  for (const char c : chunk) {
    if (pending_backslash_) {
      pending_backslash_ = false;
      // A JSON- or repr-escaped log ("...last):\n  File ...") carries its line breaks as text.
      if (c == 'n' || c == 'r') {
        emit('\n');
        continue;
      }
      if (c == 't') {
        emit(' ');
        continue;
      }
      emit('\\');  // chunk.size() + 1 leaves room for this extra byte
    }
    if (c == '\\') {
      pending_backslash_ = true;
      continue;
    }
    emit(c);
  }
  out.lower.resize(old_size + n);
  out.orig.resize(old_size + n);
  out.flags.resize(old_size + n);
}

void DenseNormalizer::finish(DenseText& out) {
  if (pending_backslash_) put('\\', out);
  pending_backslash_ = false;
}

DenseText make_dense(std::string_view text) {
  DenseText out;
  DenseNormalizer normalizer;
  normalizer.feed(text, out);
  normalizer.finish(out);
  return out;
}

std::optional<std::uint64_t> quantity_at(std::string_view lower, std::size_t pos, SiPrefix si,
                                         BareNumber bare) {
  while (pos < lower.size() && (lower[pos] == '(' || lower[pos] == ':' || lower[pos] == '=')) ++pos;
  std::size_t end = pos;
  while (end < lower.size() && (is_digit(lower[end]) || lower[end] == '.')) ++end;
  while (end > pos && lower[end - 1] == '.') --end;  // a full stop after the number
  const auto digits = lower.substr(pos, end - pos);
  const auto value = parse_number(digits);
  if (!value) return std::nullopt;
  const auto rest = lower.substr(end);
  for (const auto& unit : kUnits) {
    if (rest.substr(0, unit.text.size()) == unit.text) {
      return to_bytes(*value, si == SiPrefix::binary ? unit.binary : unit.decimal);
    }
  }
  if (bare == BareNumber::bytes) return to_bytes(*value, 1.0);
  return std::nullopt;
}

std::optional<std::uint64_t> quantity_before(std::string_view lower, std::size_t pos, SiPrefix si) {
  if (pos > lower.size()) return std::nullopt;
  std::size_t unit_begin = pos;
  while (unit_begin > 0 && is_alpha(lower[unit_begin - 1]) && pos - unit_begin < 5) --unit_begin;
  std::size_t number_begin = unit_begin;
  while (number_begin > 0 &&
         (is_digit(lower[number_begin - 1]) || lower[number_begin - 1] == '.')) {
    --number_begin;
  }
  if (number_begin == unit_begin) return std::nullopt;
  const auto unit_text = lower.substr(unit_begin, pos - unit_begin);
  for (const auto& unit : kUnits) {
    if (unit_text == unit.text) {
      return quantity_at(lower, number_begin, si);
    }
  }
  return std::nullopt;
}

std::optional<std::uint32_t> pid_at(std::string_view lower, std::size_t pos) {
  while (pos < lower.size() &&
         (lower[pos] == '(' || lower[pos] == ':' || lower[pos] == '=' || lower[pos] == '#')) {
    ++pos;
  }
  std::size_t end = pos;
  while (end < lower.size() && is_digit(lower[end]) && end - pos < 10) ++end;
  if (end == pos) return std::nullopt;
  std::uint32_t value = 0;
  const auto [ptr, ec] = std::from_chars(lower.data() + pos, lower.data() + end, value);
  if (ec != std::errc{} || ptr != lower.data() + end || value == 0) return std::nullopt;
  return value;
}

std::string token_at(const DenseView& v, std::size_t pos, std::string_view stops, TokenEnd end,
                     std::size_t max) {
  std::string token;
  for (std::size_t i = pos; i < v.orig.size() && token.size() < max; ++i) {
    const auto flag = static_cast<unsigned char>(v.flags[i]);
    if (i > pos && (flag & kSpaceBefore) != 0) {
      if (end == TokenEnd::stop_char_or_space || (flag & kLineStart) != 0) break;
      token.push_back(' ');
    }
    if (stops.find(v.orig[i]) != std::string_view::npos) break;
    token.push_back(v.orig[i]);
  }
  return token;
}

std::string line_at(const DenseView& v, std::size_t pos, std::size_t max, std::size_t max_scan) {
  if (v.orig.empty() || max == 0) return {};
  pos = std::min(pos, v.orig.size() - 1);
  const auto flag_at = [&v](std::size_t i) { return static_cast<unsigned char>(v.flags[i]); };
  std::size_t begin = pos;
  while (begin > 0 && (flag_at(begin) & kLineStart) == 0 && pos - begin < max_scan) --begin;
  // A long line is quoted from a third of `max` before pos, so the words at pos are in the quote.
  std::string line;
  if (pos - begin > max / 3) {
    begin = pos - max / 3;
    while (begin < pos && (static_cast<unsigned char>(v.orig[begin]) & 0xC0) == 0x80) ++begin;
    line = "...";
  }
  for (std::size_t i = begin; i < v.orig.size() && i - begin < max_scan; ++i) {
    if (i > begin && (flag_at(i) & kLineStart) != 0) break;
    if (i > begin && (flag_at(i) & kSpaceBefore) != 0) line.push_back(' ');
    line.push_back(v.orig[i]);
    if (line.size() > max + 4) break;  // enough to cut a whole character at max
  }
  const auto clean = sanitize_utf8(line);
  return std::string(utf8_prefix(clean, max));
}

}  // namespace sparkops::ladder::oomtext
