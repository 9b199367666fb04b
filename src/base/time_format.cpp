#include "base/time_format.hpp"

#include <ctime>

#include <fmt/format.h>

#include "base/text.hpp"

namespace sparkops {

namespace {

struct Split {
  std::time_t seconds;
  int millis;
};

Split split_time(SystemTime t) {
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
  std::int64_t secs = ms / 1000;
  std::int64_t rem = ms % 1000;
  if (rem < 0) {
    rem += 1000;
    secs -= 1;
  }
  return {static_cast<std::time_t>(secs), static_cast<int>(rem)};
}

// days_from_civil (Howard Hinnant's algorithm): proleptic Gregorian date -> days since epoch.
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? static_cast<unsigned>(-3) : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

}  // namespace

std::string format_iso8601_utc_ms(SystemTime t) {
  const Split s = split_time(t);
  std::tm tm{};
  gmtime_r(&s.seconds, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, s.millis);
}

void append_iso8601_utc_ms(std::string& out, SystemTime t) {
  const Split s = split_time(t);
  std::tm tm{};
  gmtime_r(&s.seconds, &tm);
  const int year = tm.tm_year + 1900;
  if (year < 0 || year > 9999) {
    out += format_iso8601_utc_ms(t);
    return;
  }
  // "YYYY-MM-DDTHH:MM:SS.mmmZ": every other field gmtime_r gives is within its width.
  char buf[24];
  const auto put = [&buf](std::size_t at, int value, int width) {
    for (int i = width - 1; i >= 0; --i, value /= 10) {
      buf[at + static_cast<std::size_t>(i)] = static_cast<char>('0' + value % 10);
    }
  };
  put(0, year, 4);
  buf[4] = '-';
  put(5, tm.tm_mon + 1, 2);
  buf[7] = '-';
  put(8, tm.tm_mday, 2);
  buf[10] = 'T';
  put(11, tm.tm_hour, 2);
  buf[13] = ':';
  put(14, tm.tm_min, 2);
  buf[16] = ':';
  put(17, tm.tm_sec, 2);
  buf[19] = '.';
  put(20, s.millis, 3);
  buf[23] = 'Z';
  out.append(buf, sizeof buf);
}

std::string format_nvidia_smi_timestamp(SystemTime t) {
  const Split s = split_time(t);
  std::tm tm{};
  localtime_r(&s.seconds, &tm);
  return fmt::format("{:04}/{:02}/{:02} {:02}:{:02}:{:02}.{:03}", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, s.millis);
}

std::string format_compact_utc(SystemTime t) {
  const Split s = split_time(t);
  std::tm tm{};
  gmtime_r(&s.seconds, &tm);
  return fmt::format("{:04}{:02}{:02}T{:02}{:02}{:02}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

std::optional<SystemTime> parse_timestamp(std::string_view text) {
  std::string_view s = trim(text);
  // YYYY?MM?DD[T ]hh:mm:ss[.fff][Z|+hh:mm|-hh:mm]
  if (s.size() < 19) return std::nullopt;
  const auto num = [&](std::size_t pos, std::size_t len) -> std::optional<std::int64_t> {
    return parse_i64(s.substr(pos, len));
  };
  const char d1 = s[4], d2 = s[7], sep = s[10];
  if (!((d1 == '-' && d2 == '-') || (d1 == '/' && d2 == '/'))) return std::nullopt;
  if (sep != 'T' && sep != ' ') return std::nullopt;
  if (s[13] != ':' || s[16] != ':') return std::nullopt;
  const auto y = num(0, 4), mo = num(5, 2), d = num(8, 2), h = num(11, 2), mi = num(14, 2),
             se = num(17, 2);
  if (!y || !mo || !d || !h || !mi || !se) return std::nullopt;
  if (*mo < 1 || *mo > 12 || *d < 1 || *d > 31 || *h > 23 || *mi > 59 || *se > 60)
    return std::nullopt;
  // SystemTime counts int64 nanoseconds (years 1678-2262): a year outside 1900-2200 ("-999",
  // "9999", found by fuzz/trainlog_detect) would overflow the conversion, and is no log timestamp.
  if (*y < 1900 || *y > 2200 || *h < 0 || *mi < 0 || *se < 0) return std::nullopt;
  std::size_t pos = 19;
  std::int64_t nanos = 0;
  if (pos < s.size() && (s[pos] == '.' || s[pos] == ',')) {
    ++pos;
    std::int64_t scale = 100'000'000;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      nanos += (s[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
  }
  std::int64_t offset_seconds = 0;
  if (pos < s.size()) {
    const std::string_view tz = s.substr(pos);
    if (tz == "Z" || tz == "z" || tz == " UTC") {
    } else if ((tz[0] == '+' || tz[0] == '-') && (tz.size() == 6 || tz.size() == 5)) {
      const auto oh = parse_i64(tz.substr(1, 2));
      const auto om = parse_i64(tz.substr(tz.size() - 2));
      if (!oh || !om) return std::nullopt;
      offset_seconds = (*oh * 3600 + *om * 60) * (tz[0] == '+' ? 1 : -1);
    } else {
      return std::nullopt;
    }
  }
  const std::int64_t days =
      days_from_civil(*y, static_cast<unsigned>(*mo), static_cast<unsigned>(*d));
  const std::int64_t secs = days * 86400 + *h * 3600 + *mi * 60 + *se - offset_seconds;
  return SystemTime{std::chrono::duration_cast<SystemTime::duration>(
      std::chrono::seconds{secs} + std::chrono::nanoseconds{nanos})};
}

std::optional<std::chrono::seconds> parse_utc_offset(std::string_view text) {
  std::string_view s = trim(text);
  if (s.empty()) return std::nullopt;
  int sign = 1;
  if (s[0] == '+' || s[0] == '-') {
    sign = s[0] == '-' ? -1 : 1;
    s.remove_prefix(1);
  }
  std::int64_t hours = 0, minutes = 0;
  if (const auto colon = s.find(':'); colon != std::string_view::npos) {
    const auto h = parse_i64(s.substr(0, colon));
    const auto m = parse_i64(s.substr(colon + 1));
    if (!h || !m) return std::nullopt;
    hours = *h;
    minutes = *m;
  } else if (s.size() == 4) {
    const auto h = parse_i64(s.substr(0, 2));
    const auto m = parse_i64(s.substr(2));
    if (!h || !m) return std::nullopt;
    hours = *h;
    minutes = *m;
  } else {
    const auto h = parse_i64(s);
    if (!h) return std::nullopt;
    hours = *h;
  }
  if (hours > 14 || minutes > 59 || hours < 0 || minutes < 0) return std::nullopt;
  return std::chrono::seconds(sign * (hours * 3600 + minutes * 60));
}

}  // namespace sparkops
