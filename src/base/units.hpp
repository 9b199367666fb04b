#pragma once
// Unit conversions and user-facing quantities. Internally: bytes, microwatts, millicelsius,
// std::chrono durations. Conversion from kernel/driver units happens once, at the reader.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.hpp"

namespace sparkops {

inline constexpr std::uint64_t kKiB = 1024ULL;
inline constexpr std::uint64_t kMiB = 1024ULL * kKiB;
inline constexpr std::uint64_t kGiB = 1024ULL * kMiB;
inline constexpr std::uint64_t kGB = 1000ULL * 1000ULL * 1000ULL;

enum class DefaultUnit { bytes, kib, mib, gib };

// Parses a size a user typed: "4", "4G", "4GiB" (binary), "4GB" (decimal, 10^9), "512M", "1.5T".
// Single-letter suffixes K/M/G/T are binary, as in `free -g`. A bare number uses `bare_unit`.
Result<std::uint64_t> parse_bytes(std::string_view text, DefaultUnit bare_unit);

// Parses a duration: "30" (seconds), "0.5", "30s", "500ms", "1m", "2h", "1d". Must be > 0.
Result<std::chrono::nanoseconds> parse_duration(std::string_view text);

// "119.7 GiB", "512.0 MiB", "0 B": one decimal, binary units, locale-free.
std::string format_bytes(std::uint64_t bytes);
std::string format_signed_bytes(std::int64_t bytes);
// Always GiB with one decimal: "119.7" (for tables that put the unit in the header).
std::string format_gib(std::uint64_t bytes);

// "1h02m", "3m05s", "12.3s": a short human duration.
std::string format_duration(std::chrono::nanoseconds d);

inline double bytes_to_gib(std::uint64_t b) {
  return static_cast<double>(b) / static_cast<double>(kGiB);
}

}  // namespace sparkops
