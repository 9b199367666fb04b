#pragma once
// Boot-relative time for process ages: /proc/uptime and the btime line of /proc/stat.
// A process's age is uptime - start_ticks / USER_HZ (both since boot, immune to clock steps); its
// start timestamp is btime + start_ticks / USER_HZ.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

#include "base/result.hpp"
#include "host/host_root.hpp"

namespace sparkops::host {

// "350735.47 234388.90\n" -> 350735.47 s since boot (first field).
Result<std::chrono::milliseconds> parse_proc_uptime(std::string_view text);
// "btime 1762330000" line of /proc/stat -> seconds since the epoch; not_found when absent.
Result<std::int64_t> parse_proc_stat_btime(std::string_view text);

Result<std::chrono::milliseconds> read_proc_uptime(const HostRoot& root);
Result<std::int64_t> read_proc_stat_btime(const HostRoot& root);

// Age of a process started `start_ticks` after boot, given the uptime now. Absent when the start
// lies after `uptime` (a reading torn across a reboot) or ticks_per_second is 0.
std::optional<std::chrono::milliseconds> process_age(std::uint64_t start_ticks,
                                                     std::uint64_t ticks_per_second,
                                                     std::chrono::milliseconds uptime);

}  // namespace sparkops::host
