#pragma once
// The caching allocator's reserve for a run: builds the replay (plan/step_replay.hpp) from the
// model's tensors and the run's steps and reads what the allocator reserved above what was asked
// for. docs/estimator.md "The caching allocator" describes the tensors and the two step orders.

#include <cstdint>
#include <limits>
#include <vector>

#include "plan/estimator.hpp"
#include "plan/step_replay.hpp"

namespace sparkops::plan {

struct ReserveFigures {
  // max_memory_reserved - the requested bytes at their peak, with every micro-batch holding
  // `run.seq` tokens (packed, or padded to the maximum): the steady state of one shape.
  std::uint64_t fixed = 0;
  // The same when lengths vary up to `run.seq` (unpacked data): eight shapes arriving in rising
  // order (no cached block of an earlier, shorter step fits a request of the next; a long run of
  // shuffled lengths holds such chains). Equal to `fixed` for packed runs.
  std::uint64_t varying = 0;
  std::uint64_t workspaces = 0;  // LibraryBuffers::total()
  ReplayResult fixed_replay, varying_replay;
};

// Persistent allocations libraries make through torch's caching allocator at the first step and
// keep, as the replay allocates them: cuBLAS's workspace per (handle, stream) — the forward runs
// on the Python thread, the backward on autograd's device thread, each with its own handle
// (CublasHandlePool.cpp getCurrentCUDABlasHandle) — cuBLASLt's 1 MiB
// (parseCUDABlasLtWorkspaceSize) and, under Unsloth's own layer, its global dequantization
// buffers and rotary cache (unsloth_buffer_bytes). max_memory_allocated counts them.
struct LibraryBuffers {
  std::vector<std::uint64_t> forward, backward;
  std::uint64_t total() const;
};
// `sim`: sim_run_for(arch, run), which the caller has at hand.
LibraryBuffers library_buffers(const models::Architecture& arch, const RunConfig& run,
                               const SimRun& sim);

// The number of lengths the varying-length bound replays (rising: seq/8, 2·seq/8, ..., seq).
inline constexpr unsigned kVaryingShapes = 8;

// `terms`: the estimator's static terms (weights, adapter, gradients, optimizer, master) so the
// replay's tensors add up to them; paged optimizer states are outside the allocator.
// `grad_share`: the share of the gradients a sharded rank keeps through the backward
// (SimRun::grad_share, plan/sharding.hpp); 1 on one GPU.
// `capacity`: what cudaMalloc can take for the allocator (AllocatorConfig::capacity; the
// estimator derives it from RunConfig::device_reach_bytes): a segment beyond it makes the replay
// release its cache and retry (ReplayResult::alloc_retries), or run out of memory. The maximum:
// no limit.
// Memoized (bounded): the same run planned again costs a lookup.
inline constexpr std::uint64_t kNoCapacity = std::numeric_limits<std::uint64_t>::max();
ReserveFigures replay_reserve(const ModelShape& shape, const RunConfig& run, const Terms& terms,
                              std::uint64_t paged_bytes, double grad_share = 1.0,
                              std::uint64_t capacity = kNoCapacity);
// Forgets every memoized replay, so the next plan replays as a fresh process does (benchmarks).
void clear_replay_cache();

// What replay_reserve_uncached replays: the model's tensors, the allocator's settings and the two
// step lists (`varying` empty where the lengths do not vary: packed, or seq below the shapes).
struct ReplayInputs {
  ReplayModel model;
  AllocatorConfig config;
  std::vector<StepShape> fixed, varying;
};
ReplayInputs replay_inputs(const ModelShape& shape, const RunConfig& run, const Terms& terms,
                           std::uint64_t paged_bytes, double grad_share = 1.0,
                           std::uint64_t capacity = kNoCapacity);

// The replay itself, for benchmarks.
ReserveFigures replay_reserve_uncached(const ModelShape& shape, const RunConfig& run,
                                       const Terms& terms, std::uint64_t paged_bytes,
                                       double grad_share = 1.0,
                                       std::uint64_t capacity = kNoCapacity);

}  // namespace sparkops::plan
