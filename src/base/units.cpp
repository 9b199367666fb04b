#include "base/units.hpp"

#include <cmath>

#include <fmt/format.h>

#include "base/checked_cast.hpp"
#include "base/text.hpp"

namespace sparkops {

Result<std::uint64_t> parse_bytes(std::string_view text, DefaultUnit bare_unit) {
  const std::string_view t = trim(text);
  const auto lead = parse_leading_double(t);
  if (!lead || !std::isfinite(lead->value) || lead->value < 0) {
    return fail(Errc::invalid_argument,
                fmt::format("size {}: expected a non-negative number with an optional unit "
                            "(e.g. 4G, 4GiB, 4GB, 512M)",
                            quote_for_message(text)));
  }
  const std::string unit = to_lower(trim(lead->rest));
  double mult = 0;
  if (unit.empty()) {
    switch (bare_unit) {
      case DefaultUnit::bytes:
        mult = 1;
        break;
      case DefaultUnit::kib:
        mult = static_cast<double>(kKiB);
        break;
      case DefaultUnit::mib:
        mult = static_cast<double>(kMiB);
        break;
      case DefaultUnit::gib:
        mult = static_cast<double>(kGiB);
        break;
    }
  } else if (unit == "b") {
    mult = 1;
  } else if (unit == "k" || unit == "kib") {
    mult = static_cast<double>(kKiB);
  } else if (unit == "m" || unit == "mib") {
    mult = static_cast<double>(kMiB);
  } else if (unit == "g" || unit == "gib") {
    mult = static_cast<double>(kGiB);
  } else if (unit == "t" || unit == "tib") {
    mult = static_cast<double>(kGiB) * 1024.0;
  } else if (unit == "kb") {
    mult = 1e3;
  } else if (unit == "mb") {
    mult = 1e6;
  } else if (unit == "gb") {
    mult = 1e9;
  } else if (unit == "tb") {
    mult = 1e12;
  } else {
    return fail(
        Errc::invalid_argument,
        fmt::format("size {}: unknown unit {}", quote_for_message(text), quote_for_message(unit)));
  }
  // Rounded in double and cast only below 2^64: llround would overflow long long from 2^63 on.
  const double bytes = std::round(lead->value * mult);
  if (bytes >= 18446744073709551616.0) {
    return fail(Errc::invalid_argument, fmt::format("size {}: too large", quote_for_message(text)));
  }
  return static_cast<std::uint64_t>(bytes);
}

Result<std::chrono::nanoseconds> parse_duration(std::string_view text) {
  const std::string_view t = trim(text);
  const auto lead = parse_leading_double(t);
  const auto bad = [&](std::string_view why) {
    return fail(Errc::invalid_argument,
                fmt::format("duration {}: {} (e.g. 30, 0.5, 30s, 500ms, 1m, 2h)",
                            quote_for_message(text), why));
  };
  if (!lead || !std::isfinite(lead->value)) return bad("expected a number with an optional unit");
  if (lead->value <= 0) return bad("must be greater than zero");
  const std::string unit = to_lower(trim(lead->rest));
  double seconds_per_unit = 0;
  if (unit.empty() || unit == "s" || unit == "sec" || unit == "secs")
    seconds_per_unit = 1;
  else if (unit == "ms")
    seconds_per_unit = 1e-3;
  else if (unit == "m" || unit == "min" || unit == "mins")
    seconds_per_unit = 60;
  else if (unit == "h" || unit == "hr" || unit == "hours")
    seconds_per_unit = 3600;
  else if (unit == "d" || unit == "days")
    seconds_per_unit = 86400;
  else
    return bad("unknown unit");
  const double ns = lead->value * seconds_per_unit * 1e9;
  if (std::isnan(ns)) return bad("not a number");
  if (ns > 9e18) return bad("too long");
  if (ns < 1e6) return bad("shorter than 1 ms");
  return std::chrono::nanoseconds(saturating_round<std::int64_t>(ns));
}

std::string format_bytes(std::uint64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (bytes >= kGiB) return fmt::format("{:.1f} GiB", b / static_cast<double>(kGiB));
  if (bytes >= kMiB) return fmt::format("{:.1f} MiB", b / static_cast<double>(kMiB));
  if (bytes >= kKiB) return fmt::format("{:.1f} KiB", b / static_cast<double>(kKiB));
  return fmt::format("{} B", bytes);
}

std::string format_signed_bytes(std::int64_t bytes) {
  if (bytes < 0) return "-" + format_bytes(static_cast<std::uint64_t>(-(bytes + 1)) + 1);
  return format_bytes(static_cast<std::uint64_t>(bytes));
}

std::string format_gib(std::uint64_t bytes) {
  return fmt::format("{:.1f}", bytes_to_gib(bytes));
}

std::string format_duration(std::chrono::nanoseconds d) {
  const double s = std::chrono::duration<double>(d).count();
  if (s < 0) return "-" + format_duration(-d);
  if (s < 60) return fmt::format("{:.1f}s", s);
  const auto total = static_cast<std::int64_t>(s);
  if (total < 3600) return fmt::format("{}m{:02}s", total / 60, total % 60);
  if (total < 86400) return fmt::format("{}h{:02}m", total / 3600, (total % 3600) / 60);
  return fmt::format("{}d{:02}h", total / 86400, (total % 86400) / 3600);
}

}  // namespace sparkops
