#pragma once
// The table of what the OOM classifier looks for, and the pure functions that read facts around a
// match. Everything here works on dense text (oom_text.hpp): lowercase, no whitespace.
//
// Precedence (docs/oom-ladder.md): when a text carries several kinds of signal, the kind listed
// first in SignalClass wins. The order puts the most specific, stated evidence first:
//   1. cgroup_kill: the kernel says a memory cgroup limit was hit (its kill line also contains the
//      global "Out of memory: Killed process", so it must outrank host_kill);
//   2. host_kill: the kernel OOM killer killed a process; on a unified pool this is the pool-level
//      event that ended the job, whatever the runtime printed on its way down;
//   3. server_admission: a server refused to start and says which budget it compared;
//   4. cuda_allocator: PyTorch's allocator, with the failed request's size;
//   5. accelerator_runtime: a runtime/driver API reported out of memory, usually without sizes;
//   6. host_exit_code: only inferred (exit -9/137, SIGKILL) - the OOM killer is the usual sender,
//      but not the only one;
//   7. driver: NVRM NV_ERR_NO_MEMORY, also logged on healthy hosts, so it counts only alone; and
//      NVRM Xid 31 (a GPU memory page fault), which is a driver-level failure but not a lack of
//      memory (OomReport::memory_exhausted is false for it).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ladder/oom_report.hpp"
#include "ladder/oom_text.hpp"

namespace sparkops::ladder::oomsig {

enum class SignalClass : std::uint8_t {
  cgroup_kill,
  host_kill,
  server_admission,
  cuda_allocator,
  accelerator_runtime,
  host_exit_code,
  driver,
};
inline constexpr std::size_t kSignalClassCount = 7;

OomKind kind_of(SignalClass c);
Evidence evidence_of(SignalClass c);

enum class Role : std::uint8_t {
  signal,           // an OOM message of some SignalClass
  load_marker,      // text that places the job in model load / engine start-up
  load_outcome,     // a start-up failure stated outright ("failed to load", "failed to start"):
                    // a load marker that also counts when it follows the failure it reports
  step_marker,      // text that places the job in a training or generation step, or serving
  step_context,     // a word that describes the job as training in prose (backward pass,
                    // gradient): a step marker that also places an error quoted before it
  eval_marker,      // an evaluation / validation / prediction loop
  save_marker,      // a checkpoint or output being written
  traceback_start,  // "Traceback (most recent call last)"
  progress_rate,    // the rate of a tqdm bar ("s/it]"): the bar's description says the phase
  bitsandbytes,     // a bitsandbytes frame or dequantization call
  near_miss,        // an OOM-looking failure that is not an OOM (display says which); an illegal
                    // memory access is also how an Xid 31 fault reaches the application
};

// The phase a marker role places the job in (unknown for roles that are not markers).
OomPhase phase_of(Role r);

// Extra validation a match needs before it counts.
enum class Check : std::uint8_t {
  none,
  nvmap_error12,      // "NvMapMem...: <n> error 12" (errno 12 = ENOMEM)
  kill_exit_code,     // followed by -9 or 137
  not_memcg,          // not preceded by "Memory cgroup"
  digit_follows,      // "iteration 100/..." rather than "max_iterations"
  allocator_message,  // "CUDA out of memory. Tried to allocate" or after a colon ("Error: CUDA out
                      // of memory"), not a mention in prose ("fails with CUDA out of memory")
  xid_31,             // "NVRM: Xid (PCI:0000:01:00): 31," - the Xid number is 31
  counter_follows,    // "batch 384/635", "Batch (3/10)": a progress counter within a few bytes
};

struct Needle {
  std::string_view text;  // dense form: lowercase, no whitespace
  Role role;
  SignalClass signal_class = SignalClass::driver;  // for Role::signal
  Check check = Check::none;
  std::string_view display = {};  // for Role::signal and near_miss: what the report quotes
};

const std::vector<Needle>& needles();

// Whether the match [start, end) of `needle` in `v` passes its Check.
bool check_passes(const Needle& needle, const oomtext::DenseView& v, std::size_t start,
                  std::size_t end);

// NvMap error 12 is a real failure only when the text states one with it: a failure word on the
// same line before it or on the line before ("GPU allocation test: FAILED" / "Error: NvMap...").
// Tegra logs the same line for CUDA-graph pre-allocations that vLLM tolerates at start-up.
bool nvmap_failure_stated(const oomtext::DenseView& v, std::size_t start);

struct Facts {
  std::optional<std::uint64_t> requested_bytes;
  std::optional<std::uint64_t> capacity_bytes;
  std::optional<std::uint64_t> free_bytes;
  std::optional<std::uint32_t> pid;
  std::optional<std::string> process;
};

// Reads what the text states around a signal match at [start, end) of `v` (v is a window around
// the match: up to ~1 KiB before and 512 bytes after).
Facts extract_facts(SignalClass c, const oomtext::DenseView& v, std::size_t start, std::size_t end);

// The phase a tqdm bar's description implies ("Loading checkpoint shards" -> load, "Evaluating",
// "Validation" -> eval, "Epoch", "Iteration", no description -> step); nullopt when the text before
// the rate is not a bar or the description names none of them.
std::optional<OomPhase> progress_bar_phase(const oomtext::DenseView& v, std::size_t rate_start);

}  // namespace sparkops::ladder::oomsig
