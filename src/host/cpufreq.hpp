#pragma once
// Per-core frequency: /sys/devices/system/cpu/cpuN/cpufreq/{scaling_cur_freq,cpuinfo_max_freq}.

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "host/host_root.hpp"

namespace sparkops::host {

struct CpuFreq {
  unsigned cpu = 0;                      // N in cpuN
  std::optional<std::uint64_t> cur_khz;  // scaling_cur_freq
  std::optional<std::uint64_t> max_khz;  // cpuinfo_max_freq (hardware maximum)
  std::optional<std::uint64_t> min_khz;  // cpuinfo_min_freq
};

// Pure: one kHz file ("3504000\n"); malformed names `file` and line 1.
Result<std::uint64_t> parse_khz(std::string_view text, std::string_view file);

// Cores that have a cpufreq directory, sorted by number; empty when none (VMs, containers).
// Unreadable files leave that field absent; malformed content is an Error naming the file.
Result<std::vector<CpuFreq>> read_cpufreq(const HostRoot& root);

}  // namespace sparkops::host
