#pragma once
// /proc/vmstat counters that tell memory trouble (docs/domain.md "Kernel signs of trouble").
// All counters are cumulative since boot; diff two reads for rates.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "host/host_root.hpp"

namespace sparkops::host {

struct Vmstat {
  std::optional<std::uint64_t> oom_kill;                 // kernel OOM killer invocations (4.13+)
  std::optional<std::uint64_t> pgmajfault;               // major faults (pages read back from disk)
  std::optional<std::uint64_t> workingset_refault_anon;  // 5.9+
  std::optional<std::uint64_t> workingset_refault_file;  // 5.9+
  std::optional<std::uint64_t> workingset_refault;       // legacy single counter (< 5.9)
  std::optional<std::uint64_t> pswpin;                   // pages swapped in
  std::optional<std::uint64_t> pswpout;                  // pages swapped out
  // Every pgscan_* / pgsteal_* key, by its suffix ("kswapd", "direct", "khugepaged", "anon",
  // "file", and pre-4.8 per-zone ones such as "kswapd_normal").
  std::map<std::string, std::uint64_t> pgscan;
  std::map<std::string, std::uint64_t> pgsteal;

  // Pages scanned/stolen by every reclaimer: the sum over reclaimer keys ("anon"/"file" split the
  // same pages by type, "direct_throttle" counts events: both excluded). Absent when no such key.
  std::optional<std::uint64_t> pgscan_total() const;
  std::optional<std::uint64_t> pgsteal_total() const;
  // anon + file when either is present, else the legacy counter.
  std::optional<std::uint64_t> workingset_refault_total() const;
};

// Pure. Lines are "key value"; a known key with a non-numeric value is malformed (naming the line).
//   "oom_kill 0"
Result<Vmstat> parse_vmstat(std::string_view text);
// One counter of /proc/vmstat ("pgmajfault") without building the whole Vmstat (the sampler's
// per-tick read); absent when the key is missing or its line is not "key number".
std::optional<std::uint64_t> vmstat_counter(std::string_view text, std::string_view key);

// Reads /proc/vmstat; nullopt when the file does not exist.
Result<std::optional<Vmstat>> read_vmstat(const HostRoot& root);

}  // namespace sparkops::host
