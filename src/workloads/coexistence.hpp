#pragma once
// The skill's rule for concurrent workloads: one heavy job at a time applies to uncapped or
// near-capacity workloads; a small, capped workload coexists (a < 4 GB LoRA beside a vLLM capped at
// gpu-memory-utilization <= 0.5). Check the other process's cap, not just its presence.
//
// Given a scan, the pool and what a new run needs:
//   does_not_fit  the need exceeds the pool total minus overhead: nothing to stop would help.
//   stop_first    a heavy workload (or an orphaned vLLM engine) is running, or the room left once
//                 every workload has grown to its claim is short: stop these PIDs first.
//   tight         it fits, with less than `tight_margin_bytes` to spare.
//   coexists      it fits with margin beside what runs.
// room = min(budget now (MemAvailable - overhead), total - overhead - sum of max(claim, actual)):
// the first is what is free now, the second what stays free once capped servers reach their caps.
//
// Oversubscription is a finding of its own, question or not: when the workloads' claims together
// (sum of max(claim, actual)) exceed total - overhead, the caps promise more than the pool holds
// and the servers can evict each other as they grow. `oversubscribed_bytes` says by how much,
// `oversubscription` says it in one line, and the verdict is stop_first (never "no heavy workload
// running"): the stop list names the largest claimers, in order, until the claims fit.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "host/pool.hpp"
#include "workloads/scan.hpp"

namespace sparkops {

enum class VerdictKind { coexists, tight, stop_first, does_not_fit };
std::string_view verdict_kind_name(
    VerdictKind k);  // "coexists", "tight", "stop_first", "does_not_fit"

struct StopAdvice {
  std::uint32_t pid = 0;
  std::string label;              // "vLLM"
  std::string reason;             // "uncapped: claims 107.7 GiB at default 0.9"
  std::uint64_t frees_bytes = 0;  // its reserved bytes (max of claim and actual)
};

struct CoexistenceOptions {
  std::uint64_t tight_margin_bytes = 8ULL << 30;
};

struct CoexistenceVerdict {
  VerdictKind kind = VerdictKind::coexists;
  std::uint64_t need_bytes = 0;
  std::uint64_t room_bytes = 0;            // min of the two below
  std::uint64_t budget_now_bytes = 0;      // pool budget: MemAvailable - overhead
  std::uint64_t room_at_caps_bytes = 0;    // total - overhead - reserved
  std::uint64_t reserved_bytes = 0;        // sum over workloads of max(claim, actual)
  std::size_t heavy_count = 0;             // workloads the one-heavy-job rule counts as heavy
  std::vector<StopAdvice> stop;            // in the order to stop them
  std::vector<StopAdvice> orphans;         // orphaned vLLM engines holding memory (always listed)
  std::uint64_t oversubscribed_bytes = 0;  // reserved - (total - overhead); 0 when the claims fit
  std::string oversubscription;            // the warning line; empty when the claims fit
  std::string summary;                     // one line with the numbers
};

CoexistenceVerdict coexistence_verdict(const WorkloadScan& scan, std::uint64_t need_bytes,
                                       const PoolView& pool,
                                       const CoexistenceOptions& options = {});

}  // namespace sparkops
