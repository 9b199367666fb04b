#pragma once
// cgroup v2 memory limits of the calling process's cgroup (containers set these).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "host/host_root.hpp"

namespace sparkops::host {

struct CgroupMemory {
  std::string path;  // "/system.slice/docker-abc.scope" (from /proc/self/cgroup)
  std::optional<std::uint64_t> max_bytes;      // memory.max; absent when "max" (no limit)
  std::optional<std::uint64_t> high_bytes;     // memory.high; absent when "max"
  std::optional<std::uint64_t> current_bytes;  // memory.current
  // The cgroup whose memory.max binds: `path` itself or an ancestor with less headroom (a limit on
  // user.slice or on a pod's parent applies to every child). max_bytes/current_bytes are that
  // cgroup's; equals `path` when no limit is set anywhere.
  std::string limit_path;

  // max - current when a limit is set (0 when over), else absent.
  std::optional<std::uint64_t> headroom_bytes() const;
};

// "0::/user.slice/user-1000.slice/session-2.scope" -> the v2 path; not_found when no "0::" line.
Result<std::string> parse_proc_self_cgroup(std::string_view text);
// memory.max / memory.high content: "max\n" -> nullopt, "8589934592\n" -> value; junk -> Error.
Result<std::optional<std::uint64_t>> parse_cgroup_limit(std::string_view text,
                                                        std::string_view file);

// Reads /proc/self/cgroup, then /sys/fs/cgroup/<path>/memory.{max,high,current}; inside a container
// the namespace root ("0::/") maps to /sys/fs/cgroup itself, and a host path whose directory is not
// mounted in this namespace falls back to /sys/fs/cgroup. Ancestors' memory.max are read too (see
// limit_path). Absent (nullopt) when the machine has no cgroup v2 memory controller files for this
// process (cgroup v1, no /proc/self/cgroup). Unreadable files: permission_denied; junk: malformed.
Result<std::optional<CgroupMemory>> read_cgroup_memory(const HostRoot& root);

}  // namespace sparkops::host
