#pragma once
// Timestamp formats used on output. All locale-free.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "base/clock.hpp"

namespace sparkops {

// "2025-11-09T09:26:12.345Z" (UTC, milliseconds).
std::string format_iso8601_utc_ms(SystemTime t);
// The same text appended to `out`, its digits written without a format string for the years
// 0..9999 (the sample tick writes one per row); other years as format_iso8601_utc_ms.
void append_iso8601_utc_ms(std::string& out, SystemTime t);
// "2025/11/09 09:26:12.345" as nvidia-smi prints `timestamp` (local time of the process's TZ).
std::string format_nvidia_smi_timestamp(SystemTime t);
// "20251109T092612Z": for file and folder names.
std::string format_compact_utc(SystemTime t);

// Parses "2025-11-09T09:26:12.345Z", "2025-11-09 09:26:12", "2025/11/09 09:26:12.345" (read as UTC
// unless an offset is given). nullopt when not a timestamp.
std::optional<SystemTime> parse_timestamp(std::string_view text);

// "+01:00", "-0530", "+2", "0" -> seconds east of UTC, within the real zones (-14:00..+14:00);
// nullopt otherwise.
std::optional<std::chrono::seconds> parse_utc_offset(std::string_view text);

}  // namespace sparkops
