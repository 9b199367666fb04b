#pragma once
// `sparkops plan`: will this model, method and batch/packing fit in the unified pool?
// The public API other modules call (ladder, watch, procs --plan): build a PlanInput (usually via
// cli/plan_flags.hpp), call make_plan, read the PlanResult. The advice helpers are pure functions
// over a resolved ModelShape and a RunConfig, so the OOM ladder can ask "what fits" directly.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "host/host_root.hpp"
#include "host/pool.hpp"
#include "models/hf_cache.hpp"
#include "models/hub.hpp"
#include "models/model_shape.hpp"
#include "plan/anchors.hpp"
#include "plan/estimator.hpp"

namespace sparkops::plan {

using models::ArchOverrides;
using models::HfCacheEnv;
using models::ModelSource;
using models::ResolvedModel;
using models::ShardInfo;

// Which model: a catalogue name ("Llama-3.1-8B"), a local directory with config.json, a Hugging
// Face repo id found in the local cache ("meta-llama/Llama-3.1-8B"), or a bare parameter count.
struct ModelRef {
  std::string name;                     // empty when only `params` is given
  std::optional<std::uint64_t> params;  // --params 70B
  ArchOverrides arch;                   // --hidden --layers ... (apply to `params` models)
  // The block layout the activation mechanism needs (--mlp, --norm, --parallel-block); empty:
  // the nearest catalogue shape's layout, said in a note.
  std::string mlp, norm;
  bool parallel_block = false;
};

struct PlanInput {
  ModelRef model;
  RunConfig run;
  std::optional<std::uint64_t> budget_bytes;  // --budget N; nullopt = auto (the live pool)
  std::optional<std::uint64_t>
      overhead_bytes;  // --overhead N; nullopt = PoolOptions default/config
  // --device-total SIZE: the device's memory as CUDA reports it. Training reads it as the reach of
  // cudaMalloc (RunConfig::device_reach_bytes; docs/estimator.md "The device's capacity"), fraction
  // engines as their base. nullopt: the card's free memory on a discrete GPU, the pool on a
  // unified machine, unknown under --budget.
  std::optional<std::uint64_t> device_total_bytes;
  // Set when the framework was not given (neither --framework nor config plan.framework): the
  // same flags under every other preset. `run` is the default preset's; make_plan prints the
  // range the presets span.
  std::vector<RunConfig> framework_alternatives;
};

struct PlanEnvironment {
  host::HostRoot root{"/"};            // --root: where /proc/meminfo and cgroup files are read
  host::PoolOptions pool_options;      // overhead etc. (PlanInput::overhead_bytes wins)
  std::optional<host::PoolView> pool;  // when set, used instead of reading `root`
  // A discrete GPU's memory (NVML reports it): then the budget is its free memory, not the pool's
  // (host/pool.hpp training_budget). Unset where memory is unified or no GPU was read.
  std::optional<host::DeviceMemory> device_memory;
  HfCacheEnv hf_cache;          // HF_HUB_CACHE / HF_HOME / HOME values
  models::HubAccess hub;        // offline unless the command allows the Hub
  std::vector<Anchor> anchors;  // embedded_anchors() + user anchors (load_anchors)
};

enum class Verdict { fits, fits_after_flush, tight, wont_fit };
std::string_view verdict_name(Verdict v);  // "fits", "fits_after_flush", "tight", "wont_fit"
// The exit status a plan's verdict gives (README "Exit codes"): 0 fits (after a flush too),
// 3 tight, 1 won't fit.
int verdict_exit_code(Verdict v);

enum class AdviceKind { shorter_seq, smaller_batch, method_down, more_nodes };
std::string_view advice_kind_name(AdviceKind k);  // "shorter_seq", ...

// What a budget is held against. On a unified machine the pool's peak (the device side, the
// process's host side and what it pins or pages: all one memory). On a discrete GPU the device's
// own peak: what nvidia-smi shows for the process (reserved + context + paged states); the host
// side and the load's mmap'd shard stay in host memory there.
enum class PeakBasis { pool, device };

// The peak for `basis`: pool = Estimate::peak_pool_bytes(); device = the larger of the training
// peak on the device and the load's device side (the final weights and the context, plus QLoRA's
// bf16 copy of one shard: the load peak less the host process and the mmap'd shard).
std::uint64_t peak_bytes(const Estimate& e, PeakBasis basis);

struct Advice {
  AdviceKind kind;
  RunConfig run;      // the changed run
  Estimate estimate;  // its estimate
  bool fits = false;  // peak (train and load, on the plan's PeakBasis) <= budget
};

// The peak (PlanResult::peak_basis) across the framework presets when the framework is unknown:
// the presets at both ends, each end estimated with its own replay.
struct FrameworkRange {
  std::uint64_t low_bytes = 0, high_bytes = 0;
  Framework low = Framework::hf, high = Framework::hf;
};

struct PlanResult {
  ResolvedModel model;
  RunConfig run;
  Estimate estimate;
  std::uint64_t budget_bytes = 0;
  std::optional<host::PoolView> pool;  // absent when --budget was given
  // Set when the budget is a discrete GPU's free memory (PlanEnvironment::device_memory); the
  // verdict and the advice then hold the device peak against it (peak_basis device).
  std::optional<host::DeviceMemory> device;
  PeakBasis peak_basis = PeakBasis::pool;
  Verdict verdict = Verdict::wont_fit;
  std::optional<AnchorMatch> anchor;
  std::optional<FrameworkRange> framework_range;  // framework unknown (PlanInput alternatives)
  std::vector<Advice> advice;                     // empty when it fits
  std::vector<std::string> notes;  // assumptions made (shape assumed, shard size assumed, ...)
};

// Resolves the model, estimates, reads the budget, picks the verdict, the nearest anchor and
// (when it does not fit) the advice ladder. Errors: unknown model, malformed config/safetensors,
// missing shard, invalid run (zero batch/seq, contradictory flags), unreadable meminfo.
Result<PlanResult> make_plan(const PlanInput& input, const PlanEnvironment& env);

// The run a pre-quantized base implies: a 4-bit bitsandbytes base turns LoRA into QLoRA, another
// frozen quantized base turns --method qlora into LoRA over it, and full fine-tuning of one is an
// Error. Notes say what was read and changed. Unquantized shapes return `requested`.
Result<RunConfig> run_for_quantized_base(const RunConfig& requested, const ModelShape& shape,
                                         std::vector<std::string>& notes);

// Resolves only the model part: --params, else models::resolve_model_name (local path, HF cache,
// the Hub when `hub` allows, the catalogue).
Result<ResolvedModel> resolve_model(const ModelRef& ref, const HfCacheEnv& hf_cache,
                                    const models::HubAccess& hub = {});

// Verdict for a peak against a budget: wont_fit above the budget, tight within 10 % of it,
// fits_after_flush when it, with the run's own cached checkpoint pages (`page_cache`), exceeds
// what is free now (pool given) but not the budget, else fits.
Verdict verdict_for(std::uint64_t peak_pool_bytes, std::uint64_t budget_bytes,
                    const std::optional<host::PoolView>& pool, std::uint64_t page_cache = 0);

// The verdict for an estimate: wont_fit when its tensors do not fit in the device's capacity
// (Estimate::out_of_memory: torch raises OutOfMemoryError whatever the budget), else verdict_for
// its peak on `basis`.
Verdict verdict_of(const Estimate& e, PeakBasis basis, std::uint64_t budget_bytes,
                   const std::optional<host::PoolView>& pool);
// Whether an estimate fits: its tensors fit the device's capacity and its peak the budget.
bool fits_budget(const Estimate& e, PeakBasis basis, std::uint64_t budget_bytes);

// The largest packing length (multiple of 128, <= run.seq) whose peak fits the budget.
// `largest_shard_bytes` as in estimate(): the model directory's largest shard when known.
std::optional<Advice> largest_seq_that_fits(
    const ModelShape& shape, const RunConfig& run, std::uint64_t budget_bytes,
    std::optional<std::uint64_t> largest_shard_bytes = std::nullopt,
    PeakBasis basis = PeakBasis::pool);
// The largest micro-batch (< run.batch) that fits at run.seq.
std::optional<Advice> largest_batch_that_fits(
    const ModelShape& shape, const RunConfig& run, std::uint64_t budget_bytes,
    std::optional<std::uint64_t> largest_shard_bytes = std::nullopt,
    PeakBasis basis = PeakBasis::pool);
// full -> lora (bf16) -> qlora; nullopt at qlora.
std::optional<RunConfig> method_tier_down(const RunConfig& run);
// The whole ladder for a run that does not fit: seq, then batch, then method tiers, then 2 nodes.
std::vector<Advice> advise(const ModelShape& shape, const RunConfig& run,
                           std::uint64_t budget_bytes,
                           std::optional<std::uint64_t> largest_shard_bytes = std::nullopt,
                           PeakBasis basis = PeakBasis::pool);

}  // namespace sparkops::plan
