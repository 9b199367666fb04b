#pragma once
// Small text helpers shared by the training-log parsers. All locale-free, no allocation.

#include <cstdint>
#include <optional>
#include <string_view>

#include "base/clock.hpp"

namespace sparkops::trainlog {

// A timestamp at the very start of a line, bracketed or not:
//   "[2025-11-06 11:25:06,763] [INFO] ..."  (axolotl, DeepSpeed)
//   "2023-08-02 00:41:17.458 | INFO ..."     (loguru)
//   "2026-01-17 00:35:19.060261: E ..."       (TensorFlow)
// Read as UTC. `end` receives the offset just past the timestamp (and its closing bracket).
std::optional<SystemTime> leading_timestamp(std::string_view line, std::size_t* end = nullptr);

// "04:24", "2:48:45", "100:30:01", "0:02:12", "1 day, 0:08:23", "2 days, 1:00:00" -> seconds.
std::optional<double> parse_clock_seconds(std::string_view text);

// parse_double (base/text.hpp) with a fast path for the plain decimals logs print ("21.36",
// "0.0002", "613"): up to 15 digits, the same correctly rounded value without a general parse.
std::optional<double> parse_decimal(std::string_view text);

// The number right after the first occurrence of `key` (spaces after the key are skipped).
std::optional<double> number_after(std::string_view line, std::string_view key);
std::optional<std::int64_t> integer_after(std::string_view line, std::string_view key);

// What launchers and log collectors put before a process's own text, removed so that every parser
// sees the line as the framework printed it:
//   "[rank1]: ", "[rank 1]: ", "[rank: 1] ", "[default0]:"   (torchrun / PyTorch distributed)
//   "[1,0]<stdout>:"                                           (mpirun --tag-output)
//   "0: "                                                      (srun --label)
//   "[pod/trainer-0/main] "                                    (kubectl logs --prefix)
//   "trainer-1  | "                                            (docker compose)
//   "2024-05-01T12:00:00.123456789Z "                          (kubectl/docker --timestamps)
// `rank` receives the rank the prefix names (nullopt when none does).
std::string_view strip_line_prefix(std::string_view line, std::optional<int>* rank = nullptr);

// Offsets a time by fractional seconds.
SystemTime add_seconds(SystemTime t, double seconds);
double seconds_between(SystemTime from, SystemTime to);

}  // namespace sparkops::trainlog
