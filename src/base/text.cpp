#include "base/text.hpp"

#include <cmath>

#include <charconv>
#include <cstdio>

namespace sparkops {

std::string_view trim(std::string_view s) {
  const auto is_space = [](char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
  };
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.starts_with(prefix);
}
bool ends_with(std::string_view s, std::string_view suffix) {
  return s.ends_with(suffix);
}
bool contains(std::string_view s, std::string_view needle) {
  return s.find(needle) != std::string_view::npos;
}

static char ascii_lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

bool icontains(std::string_view s, std::string_view needle) {
  if (needle.empty()) return true;
  if (needle.size() > s.size()) return false;
  for (std::size_t i = 0; i + needle.size() <= s.size(); ++i) {
    std::size_t j = 0;
    while (j < needle.size() && ascii_lower(s[i + j]) == ascii_lower(needle[j])) ++j;
    if (j == needle.size()) return true;
  }
  return false;
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = ascii_lower(c);
  return out;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

std::vector<std::string_view> split_ws(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    const std::size_t start = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

std::vector<std::string_view> split_lines(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (start < s.size()) {
    const std::size_t pos = s.find('\n', start);
    if (pos == std::string_view::npos) {
      out.push_back(s.substr(start));
      break;
    }
    out.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
  return out;
}

template <class T>
static std::optional<T> parse_integral(std::string_view s, int base = 10) {
  s = trim(s);
  if (s.empty()) return std::nullopt;
  if (s.front() == '+') s.remove_prefix(1);
  T value{};
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value, base);
  if (ec != std::errc{} || ptr != s.data() + s.size()) return std::nullopt;
  return value;
}

std::optional<std::uint64_t> parse_u64(std::string_view s) {
  return parse_integral<std::uint64_t>(s);
}
std::optional<std::int64_t> parse_i64(std::string_view s) {
  return parse_integral<std::int64_t>(s);
}

std::optional<std::uint64_t> parse_hex_u64(std::string_view s) {
  s = trim(s);
  if (s.starts_with("0x") || s.starts_with("0X")) s.remove_prefix(2);
  return parse_integral<std::uint64_t>(s, 16);
}

std::optional<double> parse_double(std::string_view s) {
  s = trim(s);
  if (s.empty()) return std::nullopt;
  if (s.front() == '+') s.remove_prefix(1);
  double value{};
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc{} || ptr != s.data() + s.size()) return std::nullopt;
  return value;
}

std::optional<std::int64_t> exact_integer(double v) {
  constexpr double kExact = 9007199254740992.0;  // 2^53
  if (!std::isfinite(v) || v > kExact || v < -kExact || std::trunc(v) != v) return std::nullopt;
  return static_cast<std::int64_t>(v);
}

std::optional<LeadingNumber> parse_leading_double(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  double value{};
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc{} || ptr == s.data()) return std::nullopt;
  return LeadingNumber{value, s.substr(static_cast<std::size_t>(ptr - s.data()))};
}

std::string quote_for_message(std::string_view s, std::size_t max) {
  std::string out;
  out.reserve(std::min(s.size(), max) + 2);
  out.push_back('"');
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (out.size() >= max + 1) {
      out += "...";
      break;
    }
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  out.push_back('"');
  return out;
}

}  // namespace sparkops
