#include "trainlog/log_text.hpp"

#include <charconv>
#include <cmath>

#include "base/text.hpp"
#include "base/time_format.hpp"

namespace sparkops::trainlog {

namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

}  // namespace

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

std::optional<double> parse_clock_seconds(std::string_view text) {
  std::string_view s = trim(text);
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
  return t +
         std::chrono::duration_cast<SystemTime::duration>(std::chrono::duration<double>(seconds));
}

double seconds_between(SystemTime from, SystemTime to) {
  return std::chrono::duration<double>(to - from).count();
}

}  // namespace sparkops::trainlog
