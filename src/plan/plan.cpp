#include "plan/plan.hpp"

#include <algorithm>
#include <limits>
#include <system_error>

#include <fmt/format.h>

#include "base/console.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "host/cgroup.hpp"
#include "host/meminfo.hpp"
#include "models/catalogue.hpp"
#include "models/resolve.hpp"
#include "plan/autograd_sim.hpp"
#include "plan/device_capacity.hpp"
#include "plan/estimator.hpp"
#include "plan/frameworks.hpp"
#include "plan/reserve_model.hpp"

namespace sparkops::plan {

namespace fs = std::filesystem;

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::fits:
      return "fits";
    case Verdict::fits_after_flush:
      return "fits_after_flush";
    case Verdict::tight:
      return "tight";
    case Verdict::wont_fit:
      return "wont_fit";
  }
  return "wont_fit";
}

int verdict_exit_code(Verdict v) {
  switch (v) {
    case Verdict::fits:
    case Verdict::fits_after_flush:
      return kExitOk;
    case Verdict::tight:
      return kExitTight;
    case Verdict::wont_fit:
      return kExitFailure;
  }
  return kExitFailure;
}

std::string_view advice_kind_name(AdviceKind k) {
  switch (k) {
    case AdviceKind::shorter_seq:
      return "shorter_seq";
    case AdviceKind::smaller_batch:
      return "smaller_batch";
    case AdviceKind::method_down:
      return "method_down";
    case AdviceKind::more_nodes:
      return "more_nodes";
  }
  return "shorter_seq";
}

Result<RunConfig> run_for_quantized_base(const RunConfig& requested, const ModelShape& shape,
                                         std::vector<std::string>& notes) {
  if (!shape.quant) return requested;
  const models::Quantization& q = *shape.quant;
  RunConfig run = requested;
  notes.push_back(fmt::format("pre-quantized checkpoint: {} {}, {} of stored weights ({})",
                              models::quant_method_name(q.method), q.format,
                              format_bytes(q.weight_bytes),
                              q.exact ? "exact, from the tensor headers"
                                      : "derived from quantization_config and the architecture"));
  notes.push_back(q.training_note);
  if (!q.serving_note.empty()) notes.push_back("serving: " + q.serving_note);
  if (q.training != models::QuantTraining::frozen_quantized) return run;
  if (run.method == Method::full) {
    return fail(Errc::invalid_argument,
                fmt::format("{}: a {} checkpoint cannot be fully fine-tuned; --method lora trains "
                            "adapters over the frozen quantized base",
                            shape.name, models::quant_method_name(q.method)));
  }
  if (q.method == models::QuantMethod::bnb_4bit && run.method == Method::lora) {
    run.method = Method::qlora;
    run.double_quant = q.double_quant ? DoubleQuant::on : DoubleQuant::off;
    notes.push_back("the 4-bit base makes this LoRA run QLoRA: planned as --method qlora");
  } else if (q.method != models::QuantMethod::bnb_4bit && run.method == Method::qlora) {
    run.method = Method::lora;
    notes.push_back(
        "the base is already quantized: --method qlora planned as LoRA over the stored weights");
  }
  return run;
}

Result<ResolvedModel> resolve_model(const ModelRef& ref, const HfCacheEnv& hf_cache,
                                    const models::HubAccess& hub) {
  if (ref.name.empty()) {
    if (!ref.params) return fail(Errc::invalid_argument, "plan: give a MODEL or --params");
    std::string assumed;
    auto shape = models::shape_from_params(*ref.params, ref.arch, &assumed);
    if (!shape) return tl::unexpected(shape.error());
    ResolvedModel m;
    m.source = ModelSource::params;
    m.shape = std::move(*shape);
    // Only layouts a layer program exists for (data/families.json): Llama's gated MLP + RMSNorm
    // in sequence, GPT-NeoX's plain MLP + LayerNorm in parallel, GPT-2's plain MLP + LayerNorm
    // in sequence (learned positions, dropout 0.1 as GPT-2's config and Megatron-Core's
    // TransformerConfig default); any other combination has no mechanism behind it, so it is
    // refused rather than estimated as the wrong block.
    const bool layout_given = !ref.mlp.empty() || !ref.norm.empty() || ref.parallel_block;
    if (layout_given) {
      const std::string mlp = ref.mlp.empty() ? "gated" : ref.mlp;
      const std::string norm = ref.norm.empty() ? (mlp == "plain" ? "layer" : "rms") : ref.norm;
      const bool parallel = ref.parallel_block || (ref.mlp == "plain" && ref.norm.empty());
      if (mlp == "gated" && norm == "rms" && !parallel) {
        m.shape.arch.family = "llama";
        m.shape.arch.mlp = MlpKind::gated;
      } else if (mlp == "plain" && norm == "layer" && parallel) {
        m.shape.arch.family = "gpt_neox";
        m.shape.arch.mlp = MlpKind::plain;
      } else if (mlp == "plain" && norm == "layer") {
        m.shape.arch.family = "gpt2";
        m.shape.arch.mlp = MlpKind::plain;
        m.notes.push_back(
            "block: GPT-2's (LayerNorm, attention, LayerNorm, GELU MLP in sequence, learned "
            "positions, dropout 0.1; Megatron-Core's TransformerEngine GPT layer keeps the same "
            "tensors)");
      } else {
        return fail(Errc::invalid_argument,
                    fmt::format("--mlp {} --norm {}{}: no layer program for that block (known: "
                                "gated+rms sequential, plain+layer sequential, plain+layer "
                                "--parallel-block)",
                                mlp, norm, parallel ? " --parallel-block" : ""));
      }
      // The user's --params stays the total; the linears take what the embeddings and norms of
      // this layout leave (as shape_from_params does).
      ParamCounts c = count_params(m.shape.arch);
      const std::uint64_t fixed = c.embedding + c.lm_head + c.other;
      if (*ref.params > fixed) {
        c.linear = *ref.params - fixed;
        c.total = c.active = *ref.params;
      }
      m.shape.params = c;
    } else {
      m.notes.push_back(fmt::format(
          "block layout assumed from {}: {} MLP, {} ({}); --mlp/--norm/--parallel-block set it",
          assumed, m.shape.arch.mlp == MlpKind::plain ? "plain" : "gated",
          m.shape.arch.family == "gpt_neox" || m.shape.arch.family == "phi" ? "LayerNorm"
                                                                            : "RMSNorm",
          m.shape.arch.family));
    }
    const bool complete = ref.arch.hidden && ref.arch.layers && ref.arch.heads &&
                          ref.arch.kv_heads && ref.arch.intermediate && ref.arch.vocab;
    if (!complete) {
      m.notes.push_back(
          fmt::format("architecture fields not given were taken from the catalogue "
                      "shape of {} (nearest in size)",
                      assumed));
    }
    return m;
  }
  if (ref.params || ref.arch.any() || !ref.mlp.empty() || !ref.norm.empty() || ref.parallel_block) {
    return fail(
        Errc::invalid_argument,
        fmt::format("{}: --params and architecture flags apply only without a MODEL", ref.name));
  }
  return models::resolve_model_name(ref.name, models::ResolveEnv{hf_cache, hub});
}

Verdict verdict_for(std::uint64_t peak, std::uint64_t budget,
                    const std::optional<host::PoolView>& pool, std::uint64_t page_cache) {
  if (peak > budget) return Verdict::wont_fit;
  if (static_cast<double>(peak) > 0.9 * static_cast<double>(budget)) return Verdict::tight;
  if (pool) {
    const std::uint64_t free_budget = pool->free_now_bytes > pool->overhead_bytes
                                          ? pool->free_now_bytes - pool->overhead_bytes
                                          : 0;
    // The run's own cached checkpoint pages also come out of what is free without reclaim.
    const std::uint64_t need =
        peak > std::numeric_limits<std::uint64_t>::max() - page_cache ? peak : peak + page_cache;
    if (need > std::min(free_budget, budget)) return Verdict::fits_after_flush;
  }
  return Verdict::fits;
}

std::uint64_t peak_bytes(const Estimate& e, PeakBasis basis) {
  if (basis == PeakBasis::pool) return e.peak_pool_bytes();
  // estimate(): load peak = weights + shard transient + context + host process, the transient
  // being the mmap'd shard (host page cache) and, for QLoRA, its bf16 device copy.
  const std::uint64_t host_part = e.terms.host_process + e.largest_shard_bytes;
  const std::uint64_t load_device =
      e.load_peak_pool_bytes > host_part ? e.load_peak_pool_bytes - host_part : 0;
  return std::max(e.train_peak_device_bytes, load_device);
}

Verdict verdict_of(const Estimate& e, PeakBasis basis, std::uint64_t budget,
                   const std::optional<host::PoolView>& pool) {
  if (e.out_of_memory) return Verdict::wont_fit;
  return verdict_for(peak_bytes(e, basis), budget, pool, e.terms.page_cache);
}

bool fits_budget(const Estimate& e, PeakBasis basis, std::uint64_t budget) {
  return !e.out_of_memory && peak_bytes(e, basis) <= budget;
}

namespace {

// What --compile changes, and what it leaves as an upper bound.
std::string compile_note(const models::Architecture& a, const RunConfig& run) {
  if (compiles_loss(sim_run_for(a, run)))
    return "torch.compile: the cross-entropy keeps the model-dtype logits and per-row "
           "statistics (inductor's partitioner), not fp32 copies; the layers are counted as "
           "eager, so activations are an upper bound";
  return fmt::format(
      "torch.compile: the {} loss is fused already or runs outside the compiled model, so it "
      "is unchanged; the layers are counted as eager, so activations are an upper bound",
      loss_name(run.loss));
}

// The advice is estimated in full: its reserve replayed, not scaled from the probe's hint.
Advice make_advice(AdviceKind kind, const ModelShape& shape, RunConfig run, std::uint64_t budget,
                   std::optional<std::uint64_t> shard, PeakBasis basis) {
  run.reserve_fraction_hint = -1;
  Advice a{kind, run, estimate(shape, run, shard), false};
  a.fits = fits_budget(a.estimate, basis, budget);
  return a;
}

bool fits(const ModelShape& shape, const RunConfig& run, std::uint64_t budget,
          std::optional<std::uint64_t> shard, PeakBasis basis) {
  return fits_budget(estimate(shape, run, shard), basis, budget);
}

double reserve_fraction(const Estimate& e) {
  return e.train_peak_allocated_bytes > 0 ? static_cast<double>(e.terms.allocator_reserve) /
                                                static_cast<double>(e.train_peak_allocated_bytes)
                                          : 0.0;
}

// The largest value in [1, hi] whose run fits, the peak growing with it. The probes take the
// allocator reserve as the fraction one replay gives (a replay per probe would cost milliseconds
// each); the answer is then replayed itself (make_advice), and when that does not fit the search
// goes on below it with the answer's own fraction.
template <class Set>
std::optional<Advice> bisect_fit(AdviceKind kind, const ModelShape& shape, const RunConfig& run,
                                 std::uint64_t hi, std::uint64_t budget,
                                 std::optional<std::uint64_t> shard, PeakBasis basis, Set set) {
  RunConfig probe = run;
  probe.reserve_fraction_hint = reserve_fraction(estimate(shape, run, shard));
  for (int round = 0; round < 8 && hi > 0; ++round) {
    std::uint64_t lo = 0;  // largest known to fit (0 = none)
    while (lo < hi) {
      const std::uint64_t mid = lo + (hi - lo + 1) / 2;
      set(probe, mid);
      if (fits(shape, probe, budget, shard, basis)) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    if (lo == 0) return std::nullopt;
    set(probe, lo);
    Advice a = make_advice(kind, shape, probe, budget, shard, basis);
    if (a.fits) return a;
    probe.reserve_fraction_hint = reserve_fraction(a.estimate);
    hi = lo - 1;
  }
  return std::nullopt;
}

}  // namespace

std::optional<Advice> largest_seq_that_fits(const ModelShape& shape, const RunConfig& run,
                                            std::uint64_t budget,
                                            std::optional<std::uint64_t> shard, PeakBasis basis) {
  // Multiples of 128 strictly below the current packing.
  std::uint64_t hi = run.seq / 128;
  if (run.seq % 128 == 0 && hi > 0) --hi;
  return bisect_fit(AdviceKind::shorter_seq, shape, run, hi, budget, shard, basis,
                    [](RunConfig& r, std::uint64_t v) { r.seq = v * 128; });
}

std::optional<Advice> largest_batch_that_fits(const ModelShape& shape, const RunConfig& run,
                                              std::uint64_t budget,
                                              std::optional<std::uint64_t> shard, PeakBasis basis) {
  // Bisect over [1, batch - 1] (a count-down would not finish for --batch 9223372036854775807).
  if (run.batch < 2) return std::nullopt;
  return bisect_fit(AdviceKind::smaller_batch, shape, run, run.batch - 1, budget, shard, basis,
                    [](RunConfig& r, std::uint64_t v) { r.batch = v; });
}

std::optional<RunConfig> method_tier_down(const RunConfig& run) {
  RunConfig next = run;
  switch (run.method) {
    case Method::full:
      next.method = Method::lora;
      if (next.precision == Precision::fp32 || next.precision == Precision::mixed) {
        next.precision = Precision::bf16;
      }
      return next;
    case Method::lora:
      next.method = Method::qlora;
      if (next.precision == Precision::fp32) next.precision = Precision::bf16;
      return next;
    case Method::qlora:
      return std::nullopt;
  }
  return std::nullopt;
}

std::vector<Advice> advise(const ModelShape& shape, const RunConfig& run, std::uint64_t budget,
                           std::optional<std::uint64_t> shard, PeakBasis basis) {
  std::vector<Advice> out;
  if (auto a = largest_seq_that_fits(shape, run, budget, shard, basis)) {
    out.push_back(std::move(*a));
    return out;
  }
  if (auto a = largest_batch_that_fits(shape, run, budget, shard, basis)) {
    out.push_back(std::move(*a));
    return out;
  }
  // Method tiers, each tried as given and then at the shortest useful packing that fits.
  RunConfig tier = run;
  while (auto next = method_tier_down(tier)) {
    tier = *next;
    Advice a = make_advice(AdviceKind::method_down, shape, tier, budget, shard, basis);
    if (!a.fits) {
      if (auto shorter = largest_seq_that_fits(shape, tier, budget, shard, basis)) {
        shorter->kind = AdviceKind::method_down;
        a = std::move(*shorter);
      }
    }
    const bool ok = a.fits;
    out.push_back(std::move(a));
    if (ok) return out;
  }
  if (run.nodes < 2) {
    RunConfig two = run;
    two.nodes = 2;
    // Two machines help only when the static terms are sharded: FSDP (FULL_SHARD) across them.
    two.shard = ShardMode::fsdp;
    out.push_back(make_advice(AdviceKind::more_nodes, shape, two, budget, shard, basis));
  }
  return out;
}

namespace {

// Which decoder layer --framework nemo's activations came from (autograd_sim program_for).
std::string nemo_layer_note(const models::ModelShape& shape, const RunConfig& run) {
  bool known = false;
  const SimRun sr = sim_run_for(shape.arch, run);
  const std::string_view prog = program_for(shape.arch.family, sr, &known);
  if (prog.rfind("megatron_gpt", 0) == 0)
    return fmt::format(
        "--framework nemo: activations from Megatron-Core's own decoder layer (TransformerEngine "
        "spec: fused RMSNorm+linear, cuDNN fused attention, {} SwiGLU and RoPE as NeMo's {} "
        "config sets them, dropout 0); LoRA adapters still counted per Hugging Face projection "
        "(NeMo's fused linear_qkv adapter is 2·r·h a layer smaller)",
        prog == "megatron_gpt" ? "fused" : "unfused", shape.arch.family);
  return fmt::format(
      "--framework nemo: activations from the Hugging Face {} layer (Megatron-Core's layer is "
      "modelled for llama, mistral and qwen2 without recompute or a 4-bit base)",
      shape.arch.family);
}

// Which decoder layer --framework unsloth's activations came from (autograd_sim program_for,
// unsloth_fused_groups: patch_peft_model's groups).
std::string unsloth_layer_note(const models::ModelShape& shape, const RunConfig& run) {
  bool known = false;
  const SimRun sr = sim_run_for(shape.arch, run);
  const std::string_view prog = program_for(shape.arch.family, sr, &known);
  if (prog.rfind("unsloth_", 0) != 0)
    return fmt::format(
        "--framework unsloth: activations from the Hugging Face {} layer (Unsloth's own layer is "
        "modelled for llama, mistral, qwen2 and qwen3 under LoRA/QLoRA)",
        shape.arch.family);
  const std::vector<std::string> fused = unsloth_fused_groups(shape.arch, sr);
  return fmt::format(
      "--framework unsloth: activations from Unsloth's own decoder layer (Triton RMSNorm and "
      "RoPE; fused LoRA Functions for {}; {})",
      fused.empty() ? std::string("no group") : fmt::format("{}", fmt::join(fused, ", ")),
      fused.size() == 3 ? "every group adapted"
                        : "a group is fused only when all its projections are adapted, without "
                          "bias or LoRA dropout: the rest run PEFT's modules");
}

// The peak under every preset: each alternative's reserve is scaled from the planned run's
// replay (reserve_fraction_hint) to rank them, then the two ends are estimated with their own
// replay, so the printed figures are replayed ones.
std::optional<FrameworkRange> framework_range(const PlanResult& r,
                                              const std::vector<RunConfig>& alternatives,
                                              std::optional<std::uint64_t> shard) {
  const Estimate& e = r.estimate;
  const double fraction = e.train_peak_allocated_bytes > 0
                              ? static_cast<double>(e.terms.allocator_reserve) /
                                    static_cast<double>(e.train_peak_allocated_bytes)
                              : 0.0;
  const std::uint64_t base = peak_bytes(e, r.peak_basis);
  std::uint64_t lo = base, hi = base;
  const RunConfig *lo_run = &r.run, *hi_run = &r.run;
  for (const auto& alt : alternatives) {
    std::vector<std::string> ignored;
    auto run = run_for_quantized_base(with_reach(alt, r.run), r.model.shape, ignored);
    if (!run || !validate_run(*run, r.model.shape)) continue;
    RunConfig probe = *run;
    probe.reserve_fraction_hint = fraction;
    const std::uint64_t p = peak_bytes(estimate(r.model.shape, probe, shard), r.peak_basis);
    if (p < lo) lo = p, lo_run = &alt;
    if (p > hi) hi = p, hi_run = &alt;
  }
  if (lo_run == hi_run) return std::nullopt;
  auto replayed = [&](const RunConfig* run, std::uint64_t planned) {
    if (run == &r.run) return planned;
    std::vector<std::string> ignored;
    auto q = run_for_quantized_base(with_reach(*run, r.run), r.model.shape, ignored);
    return peak_bytes(estimate(r.model.shape, *q, shard), r.peak_basis);
  };
  FrameworkRange fr;
  fr.low_bytes = std::min(replayed(lo_run, base), base);
  fr.high_bytes = std::max(replayed(hi_run, base), base);
  fr.low = lo_run->framework;
  fr.high = hi_run->framework;
  return fr;
}

}  // namespace

Result<PlanResult> make_plan(const PlanInput& input, const PlanEnvironment& env) {
  auto model = resolve_model(input.model, env.hf_cache, env.hub);
  if (!model) return tl::unexpected(model.error());
  std::vector<std::string> quant_notes;
  auto adjusted = run_for_quantized_base(input.run, model->shape, quant_notes);
  if (!adjusted) return tl::unexpected(adjusted.error());
  RunConfig run = *adjusted;
  if (auto ok = validate_run(run, model->shape); !ok) return tl::unexpected(ok.error());

  PlanResult r;
  r.model = std::move(*model);
  r.run = run;
  r.notes = r.model.notes;
  r.notes.insert(r.notes.end(), quant_notes.begin(), quant_notes.end());
  std::optional<std::uint64_t> shard;
  if (!r.model.shards.empty()) {
    shard = 0;
    for (const auto& s : r.model.shards) shard = std::max(*shard, s.bytes);
  } else {
    r.notes.push_back("shard size assumed: 5 GB (save_pretrained default) for the load transient");
  }
  if (r.model.shape.arch.needs_eager_attention && run.attn == Attn::sdpa) {
    r.notes.push_back(
        "this architecture (softcapping or attention sinks) runs eager attention under "
        "sdpa in Hugging Face: a·s² scores counted; --attn flash avoids them");
  }
  // The budget first: the machine it is read from also says how far cudaMalloc reaches.
  if (input.budget_bytes) {
    r.budget_bytes = *input.budget_bytes;
  } else if (env.pool) {
    r.pool = env.pool;
  } else {
    host::PoolOptions options = env.pool_options;
    if (input.overhead_bytes) options.overhead_bytes = *input.overhead_bytes;
    auto pool = host::read_pool(env.root, options);
    if (!pool) return tl::unexpected(pool.error());
    r.pool = *pool;
  }
  if (r.pool) r.budget_bytes = r.pool->budget_bytes;
  if (!input.budget_bytes && env.device_memory) {
    // host/pool.hpp training_budget: a discrete GPU's free memory is the budget.
    const auto budget = host::training_budget(r.pool, env.device_memory);
    r.budget_bytes = budget->bytes;
    r.device = budget->device;
    r.peak_basis = PeakBasis::device;
  }
  set_device_reach(run, input.device_total_bytes, r.device, r.pool);
  r.run = run;
  r.estimate = estimate(r.model.shape, run, shard);
  if (auto note = capacity_note(r.estimate, run)) r.notes.push_back(*note);
  if (run.framework == Framework::nemo) r.notes.push_back(nemo_layer_note(r.model.shape, run));
  if (run.framework == Framework::unsloth && run.method != Method::full)
    r.notes.push_back(unsloth_layer_note(r.model.shape, run));
  if (r.estimate.pinned_host_bytes > 0) {
    r.notes.push_back(fmt::format(
        "offloaded checkpointing: {:.1f} GiB of layer inputs in pinned host memory, outside "
        "torch's device figures but in a unified pool (counted in the pool peak)",
        static_cast<double>(r.estimate.pinned_host_bytes) / 1073741824.0));
  }
  if (run.compiled) r.notes.push_back(compile_note(r.model.shape.arch, run));
  if (run.method == Method::lora && run.precision == Precision::mixed) {
    if (r.estimate.ranks > 1 && run.shard == ShardMode::fsdp) {
      r.notes.push_back(
          "--precision mixed with LoRA: the base stays fp32 (as loaded), sharded; FSDP's "
          "MixedPrecision gathers each unit in bf16 and computes in bf16");
    } else if (r.estimate.ranks == 1 || run.shard == ShardMode::ddp) {
      r.notes.push_back(
          "--precision mixed with LoRA: the fp32 base weights are counted, and autocast's bf16 "
          "copy of each frozen weight per call (kept for backward where the input needs a "
          "gradient; autocast caches only weights that train)");
    }
  }
  if (r.estimate.ranks > 1 && run.shard == ShardMode::ddp) {
    r.notes.push_back(fmt::format(
        "{} ranks under DDP: every rank holds the whole model, gradients and optimizer states "
        "(plus the gradient buckets); --shard fsdp|zero3 shards them",
        r.estimate.ranks));
  }
  if (!run.packed) {
    const Estimate& e = r.estimate;
    std::string expandable;
    if (e.expandable_reserve_bytes > 0)
      expandable = fmt::format(
          "; with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True the upper end is {} GiB",
          format_gib(e.train_peak_allocated_bytes + e.expandable_reserve_bytes));
    r.notes.push_back(fmt::format(
        "lengths vary up to --seq: max_memory_reserved {}-{} GiB. The estimate replays {} batch "
        "shapes in rising order (no cached block of a shorter step fits the next; a long run of "
        "shuffled lengths holds such chains); the chain's depth moves it most, a deeper one "
        "reserves more{}{}",
        format_gib(e.reserved_low_bytes), format_gib(e.reserved_high_bytes), kVaryingShapes,
        e.allocator_capacity_bytes > 0 && !e.out_of_memory
            ? ", up to what the allocator can take (the range's top: the device's capacity with "
              "the smallest measured context)"
            : "",
        expandable));
  }

  if (!input.framework_alternatives.empty())
    r.framework_range = framework_range(r, input.framework_alternatives, shard);
  if (r.framework_range) {
    const FrameworkRange& fr = *r.framework_range;
    r.notes.push_back(fmt::format(
        "framework not given ({} assumed, the Preset line): across the presets this run's peak "
        "is {}-{} GiB ({} - {}); the framework's defaults (loss path, checkpointing, optimizer, "
        "adapter dtype) move it most: --framework or config plan.framework pins it",
        framework_preset(r.run.framework).name, format_gib(fr.low_bytes), format_gib(fr.high_bytes),
        framework_preset(fr.low).name, framework_preset(fr.high).name));
  }
  // A page-cache flush frees host memory: it helps only where the GPU lives in the pool.
  r.verdict =
      verdict_of(r.estimate, r.peak_basis, r.budget_bytes, r.device ? std::nullopt : r.pool);
  r.anchor = nearest_anchor(
      env.anchors, r.model.shape.params.total, run, r.estimate, r.verdict != Verdict::wont_fit,
      [&](const RunConfig& at) { return estimate(r.model.shape, at, shard); });
  if (r.verdict == Verdict::wont_fit)
    r.advice = advise(r.model.shape, run, r.budget_bytes, shard, r.peak_basis);
  return r;
}

}  // namespace sparkops::plan
