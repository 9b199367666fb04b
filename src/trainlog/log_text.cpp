#include "trainlog/log_text.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "base/checked_cast.hpp"
#include "base/text.hpp"
#include "base/time_format.hpp"

namespace sparkops::trainlog {

namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '-' || c == '_' ||
         c == '.';
}

// Metaflow's task prefix (metaflow/runtime.py Task.log: "[%s (pid %s)] " % (run/step/task, pid)),
// which the CLI's logger prints after a "YYYY-MM-DD hh:mm:ss.mmm " stamp. Returns the length of
// the bracket and its space, 0 when `s` does not start with one.
std::size_t metaflow_task_length(std::string_view s) {
  if (s.empty() || s[0] != '[') return 0;
  const std::size_t close = s.find("] ");
  if (close == std::string_view::npos || close > 160) return 0;
  const std::string_view inner = s.substr(1, close - 1);
  const auto pid = inner.rfind(" (pid ");
  if (pid == std::string_view::npos || inner.back() != ')') return 0;
  const std::string_view path = inner.substr(0, pid);
  if (std::count(path.begin(), path.end(), '/') != 2 || path.find(' ') != std::string_view::npos)
    return 0;
  for (const char c : inner.substr(pid + 6, inner.size() - pid - 7)) {
    if (!is_digit(c)) return 0;
  }
  return close + 2;
}

// `argo logs WORKFLOW` prints "<pod name>: <line>"; Argo names a workflow's pods
// "<workflow>-<template>-<10-digit id>" (v3) or "<workflow>-<5-character suffix>" (v2): a DNS label
// of lower-case letters, digits and '-', whose last segment is such an id.
std::size_t argo_pod_length(std::string_view s) {
  std::size_t p = 0;
  while (p < s.size() && p < 253 &&
         ((s[p] >= 'a' && s[p] <= 'z') || is_digit(s[p]) || s[p] == '-' || s[p] == '.')) {
    ++p;
  }
  if (p == 0 || p + 1 >= s.size() || s[p] != ':' || s[p + 1] != ' ') return 0;
  const std::string_view name = s.substr(0, p);
  const auto dash = name.rfind('-');
  if (dash == std::string_view::npos || dash == 0) return 0;
  const std::string_view id = name.substr(dash + 1);
  const bool digits = id.size() >= 9 && id.size() <= 10 &&
                      std::all_of(id.begin(), id.end(), [](char c) { return is_digit(c); });
  const bool suffix = id.size() == 5 &&
                      std::any_of(id.begin(), id.end(), [](char c) { return is_digit(c); }) &&
                      std::none_of(id.begin(), id.end(), [](char c) { return c == '.'; });
  return digits || suffix ? p + 2 : 0;
}

// One prefix at the start of `s`; returns its length (0: none).
std::size_t prefix_length(std::string_view s, std::optional<int>* rank) {
  // Every prefix below starts with '[' or a name character (letters, digits, '-', '_', '.'): a
  // record that starts otherwise (a tqdm bar's "  1%", a dict's '{') has none.
  if (s.empty() || (s[0] != '[' && !is_name_char(s[0]))) return 0;
  const auto set_rank = [&](std::string_view digits) {
    int v = 0;
    const auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (rank && ec == std::errc{} && p != digits.data()) *rank = v;
  };
  if (const auto n = metaflow_task_length(s)) return n;
  if (const auto n = argo_pod_length(s)) return n;
  if (s[0] == '[') {
    const std::size_t close = s.find(']');
    if (close == std::string_view::npos || close > 64) return 0;
    const std::string_view inner = s.substr(1, close - 1);
    std::size_t end = close + 1;
    std::string_view digits;
    if (starts_with(inner, "rank")) {
      digits = trim(inner.substr(4));
      if (!digits.empty() && digits.front() == ':') digits = trim(digits.substr(1));
    } else if (starts_with(inner, "default")) {
      digits = inner.substr(7);
    } else if (starts_with(inner, "pod/")) {
      digits = {};
      if (end < s.size() && s[end] == ' ') ++end;
      return end;
    } else if (const auto comma = inner.find(',');
               comma != std::string_view::npos && s.substr(end).substr(0, 8) == "<stdout>") {
      digits = inner.substr(comma + 1);
      end += 8;
    } else if (const auto comma2 = inner.find(',');
               comma2 != std::string_view::npos && s.substr(end).substr(0, 8) == "<stderr>") {
      digits = inner.substr(comma2 + 1);
      end += 8;
    } else {
      return 0;
    }
    if (digits.empty()) return 0;
    for (const char c : digits) {
      if (!is_digit(c)) return 0;
    }
    set_rank(digits);
    if (end < s.size() && s[end] == ':') ++end;
    if (end < s.size() && s[end] == ' ') ++end;
    return end;
  }
  // "0: " (srun --label): at most 4 digits, then ": ".
  if (is_digit(s[0])) {
    std::size_t p = 0;
    while (p < s.size() && p < 5 && is_digit(s[p])) ++p;
    if (p <= 4 && p + 1 < s.size() && s[p] == ':' && s[p + 1] == ' ') {
      set_rank(s.substr(0, p));
      return p + 2;
    }
    // "2024-03-01 12:00:00.123 [run/step/task (pid N)] " (Metaflow): the stamp goes with it.
    if (s.size() > 24 && s[4] == '-' && s[7] == '-' && s[10] == ' ' && s[13] == ':') {
      const std::size_t sp = s.find(' ', 11);
      if (sp != std::string_view::npos && sp <= 32 && metaflow_task_length(s.substr(sp + 1)) > 0)
        return sp + 1;
    }
    // "2024-05-01T12:00:00.123456789Z " (RFC 3339 with a 'T', as collectors write it).
    if (s.size() > 20 && s[4] == '-' && s[7] == '-' && s[10] == 'T' && s[13] == ':') {
      const std::size_t sp = s.find(' ');
      if (sp != std::string_view::npos && sp <= 40 &&
          (s[sp - 1] == 'Z' || s[sp - 6] == '+' || s[sp - 6] == '-'))
        return sp + 1;
    }
    return 0;
  }
  // "name-1  | " (docker compose): a service name, spaces, then "| ".
  std::size_t p = 0;
  while (p < s.size() && p < 64 && is_name_char(s[p])) ++p;
  if (p == 0 || p >= s.size() || s[p] != ' ') return 0;
  std::size_t q = p;
  while (q < s.size() && s[q] == ' ') ++q;
  if (q + 1 < s.size() && s[q] == '|' && s[q + 1] == ' ' && (s[0] < '0' || s[0] > '9'))
    return q + 2;
  return 0;
}

}  // namespace

std::string_view strip_line_prefix(std::string_view line, std::optional<int>* rank) {
  for (int i = 0; i < 4; ++i) {
    const std::size_t n = prefix_length(line, rank);
    if (n == 0) break;
    line.remove_prefix(n);
  }
  return line;
}

std::optional<SystemTime> leading_timestamp(std::string_view line, std::size_t* end) {
  std::size_t pos = 0;
  const bool bracketed = !line.empty() && line[0] == '[';
  if (bracketed) pos = 1;
  // YYYY-MM-DD hh:mm:ss is 19 characters.
  if (line.size() < pos + 19) return std::nullopt;
  if (!is_digit(line[pos]) || !is_digit(line[pos + 3])) return std::nullopt;
  if (line[pos + 4] != '-' && line[pos + 4] != '/') return std::nullopt;
  std::size_t stop = pos + 19;
  if (stop < line.size() && (line[stop] == '.' || line[stop] == ',')) {
    ++stop;
    while (stop < line.size() && is_digit(line[stop])) ++stop;
  }
  const auto t = parse_timestamp(line.substr(pos, stop - pos));
  if (!t) return std::nullopt;
  if (bracketed) {
    if (stop >= line.size() || line[stop] != ']') return std::nullopt;
    ++stop;
  }
  if (end) *end = stop;
  return t;
}

namespace {

// "H:MM:SS" / "MM:SS" of whole numbers, which is what tqdm's format_interval prints: the value
// parse_clock_seconds' general path gives (every field is an exact integer in a double), without
// a number parse per field. nullopt when `s` is anything else; the general path decides then.
std::optional<double> whole_clock_seconds(std::string_view s) {
  std::int64_t total = 0, field = 0;
  int fields = 1, digits = 0;
  for (const char c : s) {
    if (is_digit(c)) {
      if (++digits > 9) return std::nullopt;
      field = field * 10 + (c - '0');
    } else if (c == ':' && digits > 0 && fields < 3) {
      total = total * 60 + field;
      field = 0;
      digits = 0;
      ++fields;
    } else {
      return std::nullopt;
    }
  }
  if (digits == 0 || fields < 2) return std::nullopt;
  return static_cast<double>(total * 60 + field);
}

}  // namespace

std::optional<double> parse_clock_seconds(std::string_view text) {
  std::string_view s = trim(text);
  if (const auto whole = whole_clock_seconds(s)) return whole;
  double days = 0;
  if (const auto comma = s.find(','); comma != std::string_view::npos) {
    // "1 day, 0:08:23" (Python's str(timedelta))
    const auto lead = parse_leading_double(s.substr(0, comma));
    if (!lead || !starts_with(trim(lead->rest), "day")) return std::nullopt;
    days = lead->value;
    s = trim(s.substr(comma + 1));
  }
  double total = 0;
  int fields = 0;
  while (!s.empty()) {
    const auto colon = s.find(':');
    const std::string_view part = s.substr(0, colon);
    const auto v = parse_double(part);
    if (!v || *v < 0) return std::nullopt;
    total = total * 60 + *v;
    ++fields;
    if (colon == std::string_view::npos) break;
    s = s.substr(colon + 1);
  }
  if (fields < 2 || fields > 3) return std::nullopt;
  return days * 86400 + total;
}

std::optional<double> parse_decimal(std::string_view text) {
  // m / 10^k with m < 10^15 < 2^53 and k <= 15: both operands are exact doubles, so the one
  // correctly rounded division is the correctly rounded value of the decimal, which is what
  // from_chars returns (Clinger's fast path). Anything else goes to the general parse.
  static constexpr double kPow10[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                      1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
  const std::string_view s = trim(text);
  std::uint64_t m = 0;
  int digits = 0, frac = -1;
  for (const char c : s) {
    if (is_digit(c)) {
      m = m * 10 + static_cast<std::uint64_t>(c - '0');
      ++digits;
      if (frac >= 0) ++frac;
    } else if (c == '.' && frac < 0 && digits > 0) {
      frac = 0;
    } else {
      return parse_double(s);
    }
  }
  if (digits == 0 || digits > 15 || frac == 0) return parse_double(s);
  const double v = static_cast<double>(m);
  return frac > 0 ? v / kPow10[frac] : v;
}

std::optional<double> number_after(std::string_view line, std::string_view key) {
  const auto at = line.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  std::size_t p = at + key.size();
  while (p < line.size() && line[p] == ' ') ++p;
  double v = 0;
  const auto [ptr, ec] = std::from_chars(line.data() + p, line.data() + line.size(), v);
  if (ec != std::errc{} || ptr == line.data() + p || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<std::int64_t> integer_after(std::string_view line, std::string_view key) {
  const auto at = line.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  std::size_t p = at + key.size();
  while (p < line.size() && line[p] == ' ') ++p;
  std::int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(line.data() + p, line.data() + line.size(), v);
  if (ec != std::errc{} || ptr == line.data() + p) return std::nullopt;
  return v;
}

SystemTime add_seconds(SystemTime t, double seconds) {
  // Seconds from a log are untrusted: no float-to-integer overflow in chrono and no int64 overflow
  // of the sum. 100 years (3.16e9 s) either way is past any run, and t + 100 years stays far inside
  // the +-292 years of int64 nanoseconds around 1970.
  constexpr double kMaxSeconds = 100 * 365.25 * 86400;
  const double s = std::clamp(seconds, -kMaxSeconds, kMaxSeconds);
  return t + std::chrono::nanoseconds(saturating_round<std::int64_t>(s * 1e9));
}

double seconds_between(SystemTime from, SystemTime to) {
  return std::chrono::duration<double>(to - from).count();
}

}  // namespace sparkops::trainlog
