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
//
// The memory a new run is judged against is a CoexistenceSpace. On a unified pool (GB10, Thor) it
// is the pool, as above, and a workload holds its host and GPU bytes there. On a discrete GPU
// (host/pool.hpp training_budget: NVML reports the device's memory) a training run lives in the
// device's memory: "total" is the device total, "budget now" NVML's free (total - used, which
// already counts every context on the card, so no overhead is kept back), and a workload holds
// only its GPU-resident bytes there (its RSS is in the other memory). The claims of a cap (vLLM's
// fraction) are already of the device total.
//
// Several cards: the space is one card (the one the training budget names). Where the GPU source
// listed each card's processes, a workload holds there what it holds on that card; one that holds
// GPU memory only on other cards is not in this space at all (not counted, not heavy here, not
// asked to stop). One that holds no GPU memory anywhere yet keeps its claim on every card: which
// card it will take is unknown.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "config/pool_sections.hpp"
#include "host/pool.hpp"
#include "workloads/scan.hpp"

namespace sparkops::workloads {

enum class VerdictKind { coexists, tight, stop_first, does_not_fit };
std::string_view verdict_kind_name(
    VerdictKind k);  // "coexists", "tight", "stop_first", "does_not_fit"

struct StopAdvice {
  std::uint32_t pid = 0;
  std::string label;              // "vLLM"
  std::string reason;             // "uncapped: claims 107.7 GiB at default 0.9"
  std::uint64_t frees_bytes = 0;  // its reserved bytes (max of claim and actual)
};

// procs.tight_margin (default written once, in config/pool_sections.hpp).
using CoexistenceOptions = config::CoexistenceMargin;

struct CoexistenceSpace {
  host::BudgetSource source = host::BudgetSource::unified_pool;
  std::uint64_t total_bytes = 0;
  std::uint64_t overhead_bytes = 0;    // kept back from the total (the pool's OS/driver overhead)
  std::uint64_t budget_now_bytes = 0;  // what a run can take now
  std::optional<unsigned> gpu_index;   // set with source gpu_memory: which GPU
  // gpu_memory with the card's process list read: the bytes each host PID holds on this card.
  std::optional<std::unordered_map<std::uint32_t, std::uint64_t>> card_bytes_by_pid;
};

// The pool's space: total, overhead and budget from the PoolView.
CoexistenceSpace pool_space(const host::PoolView& pool);
// A discrete GPU's space: its total, NVML's free now, no overhead; `snapshots` (the reading
// `device` came from) give the card's per-process memory when they list it.
CoexistenceSpace gpu_space(const host::DeviceMemory& device,
                           const std::vector<gpu::GpuSnapshot>& snapshots = {});
// The space a training run competes for: the discrete GPU's memory when `device` is set (the same
// device training_budget takes its budget from), else the pool's; nullopt when neither was read.
// status, procs and every --beside verdict take their space from here.
std::optional<CoexistenceSpace> coexistence_space(
    const std::optional<host::PoolView>& pool, const std::optional<host::DeviceMemory>& device,
    const std::vector<gpu::GpuSnapshot>& snapshots = {});

// The scan options for judging workloads in `space`: on a GPU, sized by their GPU bytes
// (ScanOptions::sized_on_gpu), fractions of the card's total, near capacity a share of it.
// Unchanged on the pool.
ScanOptions scan_options_in(ScanOptions options, const CoexistenceSpace& space);

// What a workload holds in `space` now (pool: host + GPU; a discrete GPU: its GPU bytes, on this
// card when the card's processes are known) and may hold once grown to its cap (max of its claim
// and that; 0 for a workload not in the space).
std::uint64_t held_in(const Workload& w, const CoexistenceSpace& space);
std::uint64_t reserved_in(const Workload& w, const CoexistenceSpace& space);
// False for a workload that holds GPU memory only on other cards than the space's.
bool in_space(const Workload& w, const CoexistenceSpace& space);

struct CoexistenceVerdict {
  VerdictKind kind = VerdictKind::coexists;
  host::BudgetSource source =
      host::BudgetSource::unified_pool;  // the space judged: pool or a GPU's memory
  std::optional<unsigned> gpu_index;     // set when source is gpu_memory
  std::uint64_t need_bytes = 0;
  std::uint64_t room_bytes = 0;            // min of the two below
  std::uint64_t budget_now_bytes = 0;      // pool: MemAvailable - overhead; a GPU: its free
  std::uint64_t room_at_caps_bytes = 0;    // total - overhead - reserved
  std::uint64_t reserved_bytes = 0;        // sum over workloads of reserved_in(space)
  std::size_t heavy_count = 0;             // workloads the one-heavy-job rule counts as heavy
  std::vector<StopAdvice> stop;            // in the order to stop them
  std::vector<StopAdvice> orphans;         // orphaned vLLM engines holding memory (always listed)
  std::uint64_t oversubscribed_bytes = 0;  // reserved - (total - overhead); 0 when the claims fit
  std::string oversubscription;            // the warning line; empty when the claims fit
  std::string summary;                     // one line with the numbers
};

CoexistenceVerdict coexistence_verdict(const WorkloadScan& scan, std::uint64_t need_bytes,
                                       const CoexistenceSpace& space,
                                       const CoexistenceOptions& options = {});
// On the pool's space (pool_space).
CoexistenceVerdict coexistence_verdict(const WorkloadScan& scan, std::uint64_t need_bytes,
                                       const host::PoolView& pool,
                                       const CoexistenceOptions& options = {});

// README "Exit codes", one rule for every command that gives this verdict (procs, plan --beside):
// oversubscribed claims are a finding with or without a question (1); with a question (a need was
// given), stop_first and does_not_fit are 1 and tight is 3 (as `plan`); 0 otherwise.
int coexistence_exit_code(const CoexistenceVerdict& v, bool question);

}  // namespace sparkops::workloads
