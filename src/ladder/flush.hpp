#pragma once
// `sparkops flush`: ladder step 1. sync(), then "3" into /proc/sys/vm/drop_caches (page cache,
// dentries and inodes), through a HostRoot so tests flush a scratch tree. On a unified pool CUDA's
// free memory is MemFree, so the page cache a flush drops is what the next run gains.
//
// The privilege check and sync are parameters: the CLI passes geteuid() == 0 and ::sync, tests
// pass what they need (tests run as root, so the "not root" path must not depend on the real uid).

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "host/host_root.hpp"
#include "host/meminfo.hpp"
#include "ladder/ladder.hpp"

namespace sparkops::ladder {

enum class Privilege { root, unprivileged };
enum class FlushMode { flush, dry_run };

struct FlushOptions {
  Privilege privilege = Privilege::unprivileged;
  FlushMode mode = FlushMode::flush;
  Force force = Force::no;
  // Trainers found running (one description each, "4242 python train.py (TRL)"): a flush is a
  // between-run reset, refused while one runs unless forced.
  std::vector<std::string> running_trainers;  // running_trainers(root) below
  std::function<void()> sync;                 // called before the write; empty = none
  std::function<void()> after_write;          // called before the second meminfo read (test seam)
};

struct FlushOutcome {
  host::Meminfo before;
  std::optional<host::Meminfo> after;  // absent for a dry run
  // What a flush can drop: Cached - Shmem - Mapped (shared memory and mapped pages stay), >= 0.
  std::uint64_t estimate_bytes = 0;
  // MemFree after - before: what CUDA gained (can be negative when something allocated meanwhile).
  std::optional<std::int64_t> reclaimed_bytes;
  bool forced_past_trainer = false;
};

// Cached - Shmem - Mapped, floor 0; Cached is required (not_found naming the field otherwise).
Result<std::uint64_t> flush_estimate_bytes(const host::Meminfo& m);

// Errors: permission_denied without root ("needs root: run `sudo sparkops flush`"); conflict while
// a trainer runs without Force::yes; meminfo/drop_caches read or write errors as returned.
// A dry run needs neither root nor the trainer check: it only reads.
Result<FlushOutcome> flush_page_cache(const host::HostRoot& root, const FlushOptions& options);

// Trainers the workload scanner finds under the root ("4242 TRL"). An unreadable /proc means none
// can be found: the flush then goes ahead (the check is a guard, not a lock).
std::vector<std::string> running_trainers(const host::HostRoot& root);

}  // namespace sparkops::ladder
