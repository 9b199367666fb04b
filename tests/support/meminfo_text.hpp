#pragma once
// A /proc/meminfo text shaped like a GB10's (125,388,000 kB total), with MemFree and Cached as
// given: for tests that put a machine's pool into a fixture root.

#include <cstdint>
#include <string>

namespace sparkops::test {

inline std::string meminfo_text(std::uint64_t free_kib, std::uint64_t cached_kib) {
  return "MemTotal:       125388000 kB\n"
         "MemFree:        " +
         std::to_string(free_kib) +
         " kB\n"
         "MemAvailable:   118566368 kB\n"
         "Cached:         " +
         std::to_string(cached_kib) +
         " kB\n"
         "Shmem:            1048576 kB\n"
         "Mapped:           2097152 kB\n";
}

}  // namespace sparkops::test
