#pragma once
// /proc/meminfo: the honest view of the unified pool (docs/domain.md "Memory on a unified pool").

#include <cstdint>
#include <optional>
#include <string_view>

#include "base/result.hpp"
#include "host/host_root.hpp"

namespace sparkops::host {

// Every field in bytes; absent when the kernel did not print it.
struct Meminfo {
  std::optional<std::uint64_t> mem_total_bytes;
  std::optional<std::uint64_t> mem_free_bytes;
  std::optional<std::uint64_t> mem_available_bytes;
  std::optional<std::uint64_t> buffers_bytes;
  std::optional<std::uint64_t> cached_bytes;
  std::optional<std::uint64_t> swap_total_bytes;
  std::optional<std::uint64_t> swap_free_bytes;
  std::optional<std::uint64_t> shmem_bytes;
  std::optional<std::uint64_t> mlocked_bytes;
  std::optional<std::uint64_t> mapped_bytes;
  std::optional<std::uint64_t> active_file_bytes;
  std::optional<std::uint64_t> inactive_file_bytes;
  std::optional<std::uint64_t> hugepages_total;  // pages, not bytes
  std::optional<std::uint64_t> hugepages_free;   // pages
  std::optional<std::uint64_t> hugepages_rsvd;   // pages
  std::optional<std::uint64_t> hugepage_size_bytes;

  // Bytes held by huge pages that ordinary allocations cannot use (total pages × size).
  std::optional<std::uint64_t> hugepages_reserved_bytes() const;
};

// Pure parser. Matches exact keys, ignores unknown ones and order. Values with a "kB" unit are
// converted to bytes; HugePages_* counts are kept as counts.
// A line whose value is not a number is an Error naming the line.
//   "MemAvailable:   118566368 kB"
Result<Meminfo> parse_meminfo(std::string_view text);

// The four fields the sample tick records (MemTotal, MemFree, MemAvailable, Cached) and no other:
// the same exact keys and values as parse_meminfo, found by a scan that stops once all four are
// seen (the first five lines of every kernel's meminfo), so the other ~50 lines are neither split
// nor checked (a malformed line there, or one of the four repeated after all four were seen, is not
// noticed). A malformed value of one of the four is an Error as in parse_meminfo.
Result<Meminfo> parse_meminfo_sample(std::string_view text);

// Reads <root>/proc/meminfo. A missing file is not_found (the caller decides what that means).
Result<Meminfo> read_meminfo(const HostRoot& root);

}  // namespace sparkops::host
