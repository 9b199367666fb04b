#include "serving/serving_plan.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "base/checked_cast.hpp"
#include "base/units.hpp"

namespace sparkops::serving {

namespace {

std::uint64_t to_bytes(double v) {
  if (!(v > 0)) return 0;
  if (v >= 1.8e19) return UINT64_MAX;
  return static_cast<std::uint64_t>(std::llround(v));
}

std::uint64_t sub_floor(std::uint64_t a, std::uint64_t b) {
  return a > b ? a - b : 0;
}

// The weights as the engine loads them, on one device.
std::uint64_t weights_of(const models::ResolvedModel& m, std::string& text) {
  const auto& shape = m.shape;
  if (shape.quant && shape.quant->weight_bytes > 0) {
    text = fmt::format("{} {} ({})", models::quant_method_name(shape.quant->method),
                       shape.quant->format, shape.quant->exact ? "from the tensors" : "derived");
    return shape.quant->weight_bytes;
  }
  if (m.checkpoint_bytes && *m.checkpoint_bytes > 0) {
    text = "safetensors as stored (tensor headers)";
    return *m.checkpoint_bytes;
  }
  text = "bf16, 2 bytes per parameter (no checkpoint read)";
  return shape.params.total > UINT64_MAX / 2 ? UINT64_MAX : shape.params.total * 2;
}

// The per-layer compute graph llama.cpp reserves (ggml-alloc's worst case over one ubatch), as
// Ollama estimates it in fs/ggml/ggml.go GraphSize for llama-style models (v0.11): fp32, the
// larger of the attention block (with the n_ctx x heads score matrix unless flash attention keeps
// it in tiles) and the output projection over the vocabulary.
std::uint64_t compute_buffer(const models::Architecture& a, std::uint64_t ubatch,
                             std::uint64_t ctx_total, bool flash_attention) {
  const double b = static_cast<double>(ubatch);
  const double h = static_cast<double>(a.hidden);
  const double scores =
      flash_attention ? 0.0 : static_cast<double>(ctx_total) * (1.0 + static_cast<double>(a.heads));
  const double attention = 4.0 * b * (1.0 + 4.0 * h + scores);
  const double output = 4.0 * b * (h + static_cast<double>(a.vocab));
  return to_bytes(std::max(attention, output));
}

struct Sized {
  std::vector<ServingTerm> terms;
  std::uint64_t kv_bytes = 0;
  double kv_need = 0;  // bytes the requested context x parallel needs (llama.cpp/Ollama: allocated)
  std::optional<std::uint64_t> claim;
  std::uint64_t footprint = 0;
  std::uint64_t startup = 0;
  double concurrency = 0;
  std::uint64_t tokens = 0;
  std::uint64_t host = 0;
  std::uint64_t outside_fraction = 0;  // SGLang: activations and graphs beside the static part
};

constexpr std::string_view kVllmSrc = "vllm/v1/worker/gpu_worker.py determine_available_memory";

// vLLM, SGLang and TensorRT-LLM: a byte pool of KV blocks sized from a fraction.
Sized size_fraction_engine(const models::Architecture& arch, const ServeArgs& a,
                           std::uint64_t weights, std::uint64_t checkpoint, const KvLayout& kv,
                           std::uint64_t context, std::uint64_t device_total,
                           std::uint64_t budget) {
  Sized s;
  const double frac = a.fraction.value_or(0.9);
  const std::uint64_t reqs =
      std::max<std::uint64_t>(1, std::min(a.parallel == 0 ? 256 : a.parallel, a.batch_tokens));
  const std::uint64_t act = forward_activation_bytes(arch, a.batch_tokens);
  // The sampler's fp32 logits and probabilities for one token of each request.
  const std::uint64_t sampler =
      to_bytes(2.0 * 4.0 * static_cast<double>(reqs) * static_cast<double>(arch.vocab));
  // CUDA graphs: the graph pool keeps the intermediates of the largest captured batch, which is
  // min(2 x max-num-seqs, 512) tokens in vLLM's compilation config (max_capture_size 512).
  const std::uint64_t capture =
      std::min<std::uint64_t>(512, 2 * (a.parallel == 0 ? 256 : a.parallel));
  const std::uint64_t graphs = a.enforce_eager ? 0 : forward_activation_bytes(arch, capture);
  const std::uint64_t ctx = kCudaContextBytes;
  const std::uint64_t procs = a.engine == ServeEngine::sglang ? 3 : 2;
  s.host = procs * kPythonProcessBytes;
  s.terms.push_back({"weights", weights, "model resolution (docs/models.md)"});
  s.terms.push_back({"cuda_context", ctx, "CUDA context + cuBLAS workspaces (docs/domain.md)"});
  s.terms.push_back({"activation_peak", saturating_add(act, sampler),
                     a.engine == ServeEngine::vllm
                         ? std::string(kVllmSrc) + ": profile_run at max-num-batched-tokens"
                         : "profile forward at the chunked-prefill / max_num_tokens size"});
  s.terms.push_back({"cuda_graphs", graphs,
                     a.enforce_eager
                         ? "eager: no CUDA graphs"
                         : fmt::format("graph pool of the largest capture ({} tokens)", capture)});
  const std::uint64_t fixed = saturating_add(saturating_add(weights, ctx),
                                             saturating_add(saturating_add(act, sampler), graphs));
  switch (a.engine) {
    case ServeEngine::vllm: {
      // requested = fraction x total; KV = requested - (weights + non-torch + activation peak
      // + CUDA graphs). --kv-cache-memory-bytes replaces the fraction with a KV size.
      if (a.kv_cache_bytes) {
        s.kv_bytes = *a.kv_cache_bytes;
        s.claim = saturating_add(fixed, s.kv_bytes);
      } else {
        s.claim = to_bytes(frac * static_cast<double>(device_total));
        s.kv_bytes = sub_floor(*s.claim, fixed);
      }
      s.footprint = saturating_add(*s.claim, s.host);
      break;
    }
    case ServeEngine::sglang: {
      // model_runner.profile_max_num_token: KV = free after weights - total x (1 - fraction);
      // the (1 - fraction) part holds activations and graphs.
      s.claim = to_bytes(frac * static_cast<double>(device_total));
      s.kv_bytes = sub_floor(*s.claim, saturating_add(weights, ctx));
      s.outside_fraction = saturating_add(saturating_add(act, sampler), graphs);
      s.footprint = saturating_add(saturating_add(*s.claim, s.outside_fraction), s.host);
      break;
    }
    default: {
      // TensorRT-LLM: KV = fraction x (free after weights and activations).
      const std::uint64_t free_after = sub_floor(sub_floor(budget, s.host), fixed);
      s.kv_bytes = to_bytes(frac * static_cast<double>(free_after));
      s.footprint = saturating_add(saturating_add(fixed, s.kv_bytes), s.host);
      break;
    }
  }
  s.terms.push_back({"kv_cache", s.kv_bytes,
                     a.engine == ServeEngine::vllm     ? std::string(kVllmSrc)
                     : a.engine == ServeEngine::sglang ? "sglang model_runner.profile_max_num_token"
                                                       : "kv_cache_free_gpu_memory_fraction"});
  s.terms.push_back({"host_processes", s.host,
                     fmt::format("{} Python processes importing torch (assumed {} each)", procs,
                                 format_bytes(kPythonProcessBytes))});
  const double per_seq = kv_bytes_for_sequence(kv, context);
  s.kv_need = per_seq;
  s.concurrency = per_seq > 0 ? static_cast<double>(s.kv_bytes) / per_seq : 0;
  s.tokens = to_bytes(std::floor(s.concurrency) * static_cast<double>(context));
  // Loading: the safetensors pages sit in the page cache beside the copies until reclaimed.
  s.startup = saturating_add(s.footprint, checkpoint);
  return s;
}

// llama.cpp and Ollama: weights + a KV cache for the whole context of every slot + the compute
// buffer, allocated once when the model loads.
Sized size_ggml_engine(const models::Architecture& arch, const ServeArgs& a, std::uint64_t weights,
                       const KvLayout& kv, std::uint64_t ctx_total) {
  Sized s;
  // llama_kv_cache_iswa (src/llama-kv-cache-iswa.cpp): the sliding layers keep
  // min(n_ctx, n_swa x n_seq + n_ubatch) cells, the others n_ctx.
  const std::uint64_t swa_cells =
      std::min(ctx_total, kv.window * std::max<std::uint64_t>(1, a.parallel) + a.batch_tokens);
  const double kv_bytes = kv.layer_bytes_per_token *
                          (static_cast<double>(kv.full_layers) * static_cast<double>(ctx_total) +
                           static_cast<double>(kv.sliding_layers) * static_cast<double>(swa_cells));
  s.kv_bytes = to_bytes(kv_bytes);
  s.kv_need = kv_bytes;
  const std::uint64_t compute = compute_buffer(arch, a.batch_tokens, ctx_total, a.flash_attention);
  s.terms.push_back({"weights", weights, "GGUF tensors as stored (docs/models.md)"});
  s.terms.push_back({"kv_cache", s.kv_bytes,
                     "llama_kv_cache: n_ctx cells x layers x (K + V) (src/llama-kv-cache.cpp)"});
  s.terms.push_back({"compute_buffer", compute,
                     a.flash_attention ? "ggml compute graph, flash attention (Ollama GraphSize)"
                                       : "ggml compute graph with the n_ctx x heads scores "
                                         "(Ollama GraphSize)"});
  s.terms.push_back(
      {"cuda_context", kCudaContextBytes, "CUDA context + cuBLAS workspaces (docs/domain.md)"});
  s.footprint = saturating_add(saturating_add(weights, s.kv_bytes),
                               saturating_add(compute, kCudaContextBytes));
  // With mmap the file's pages are read through the page cache into the CUDA buffers: for a
  // while both count (docs/domain.md load transient); --no-mmap reads into a host buffer instead.
  s.startup = saturating_add(s.footprint, weights);
  s.concurrency = static_cast<double>(a.parallel);
  s.tokens = ctx_total;
  return s;
}

}  // namespace

std::string_view claim_kind_name(ClaimKind k) {
  switch (k) {
    case ClaimKind::device_fraction:
      return "device_fraction";
    case ClaimKind::static_fraction:
      return "static_fraction";
    case ClaimKind::free_fraction:
      return "free_fraction";
    case ClaimKind::sized_at_load:
      return "sized_at_load";
    case ClaimKind::on_demand:
      return "on_demand";
  }
  return "device_fraction";
}

std::uint64_t forward_activation_bytes(const models::Architecture& a, std::uint64_t tokens) {
  const double q = static_cast<double>(a.heads * a.head_dim);
  const double kvd = static_cast<double>(a.kv_heads * a.head_dim);
  const double h = static_cast<double>(a.hidden);
  const double k =
      a.experts > 0 ? static_cast<double>(std::max<std::uint64_t>(1, a.experts_per_token)) : 1.0;
  const double inter = static_cast<double>(a.intermediate) * k;
  const double mlp = a.mlp == models::MlpKind::gated ? 3.0 * inter : 2.0 * inter;
  const double per_token = 2.0 * (2.0 * h + q + 2.0 * kvd + mlp);  // bf16
  return to_bytes(per_token * static_cast<double>(tokens));
}

Result<ServingPlan> make_serving_plan(const ServingInput& in) {
  ServingPlan p;
  p.args = in.args;
  p.model_name = in.model.shape.name;
  p.device_total_bytes = in.device_total_bytes;
  p.budget_bytes = in.budget_bytes;
  p.pool = in.pool;
  p.on_card = in.on_card;
  const auto& arch = in.model.shape.arch;
  auto& a = p.args;
  const std::uint64_t tp = std::max<std::uint64_t>(1, a.tensor_parallel);
  std::string wtext;
  const std::uint64_t all_weights = weights_of(in.model, wtext);
  p.weights_bytes = all_weights / tp;
  p.params = in.model.shape.params.total / tp;
  p.weights_text = tp > 1 ? fmt::format("{}, 1/{} per device", wtext, tp) : wtext;
  p.kv = kv_layout(arch, a.kv_dtype.bytes_per_value, tp);
  p.kv_bytes_per_token = kv_bytes_per_token(p.kv);
  p.kv_bytes_beyond_window = kv_bytes_per_token_beyond_window(p.kv);

  const bool ggml = a.engine == ServeEngine::llama_cpp || a.engine == ServeEngine::ollama;
  if (ggml && !in.model.gguf) {
    p.notes.push_back(
        "llama.cpp and Ollama serve GGUF files: the weights planned are this checkpoint's; a "
        "quantized GGUF (Q4_K_M, Q8_0 ...) is smaller: plan the .gguf itself");
  }
  if (!ggml && in.model.gguf) {
    p.notes.push_back("this engine loads a GGUF through its own dequantizing loader");
  }
  std::uint64_t context = a.max_context.value_or(arch.max_context);
  if (context == 0) {
    return fail(Errc::invalid_argument,
                fmt::format("{}: the model states no context length (max_position_embeddings); "
                            "give the engine's context flag",
                            p.model_name));
  }
  if (arch.max_context > 0 && a.max_context &&
      *a.max_context > arch.max_context * (ggml ? a.parallel : 1)) {
    p.notes.push_back(
        fmt::format("the context asked ({}) exceeds the model's {} tokens: the engine "
                    "refuses it (vLLM) or extends RoPE past training",
                    *a.max_context, arch.max_context));
  }
  if ((a.engine == ServeEngine::vllm || a.engine == ServeEngine::sglang) &&
      in.device_total_bytes == 0) {
    return fail(Errc::invalid_argument,
                "the device total is unknown: vLLM and SGLang size from a fraction of it");
  }

  Sized s;
  std::uint64_t ctx_total = 0;
  if (ggml) {
    // llama.cpp's -c spans every slot (n_ctx_seq = n_ctx / n_parallel); Ollama multiplies
    // num_ctx by OLLAMA_NUM_PARALLEL (server/sched.go) and passes the product as -c.
    ctx_total = a.engine == ServeEngine::ollama ? context * a.parallel : context;
    p.context = a.engine == ServeEngine::ollama ? context
                                                : context / std::max<std::uint64_t>(1, a.parallel);
    s = size_ggml_engine(arch, a, p.weights_bytes, p.kv, ctx_total);
  } else {
    p.context = context;
    const std::uint64_t checkpoint = in.model.checkpoint_bytes.value_or(all_weights) / tp;
    s = size_fraction_engine(arch, a, p.weights_bytes, checkpoint, p.kv, context,
                             in.device_total_bytes, in.budget_bytes);
  }
  p.terms = s.terms;
  p.kv_cache_bytes = s.kv_bytes;
  p.concurrency = s.concurrency;
  p.tokens_held = s.tokens;
  p.claim_bytes = s.claim;
  p.footprint_bytes = s.footprint;
  p.startup_peak_bytes = s.startup;
  if (!ggml && s.kv_need > static_cast<double>(s.kv_bytes)) {
    p.kv_shortfall_bytes = s.kv_need - static_cast<double>(s.kv_bytes);
  }

  switch (a.engine) {
    case ServeEngine::vllm:
      p.claim = ClaimKind::device_fraction;
      p.claim_text = a.kv_cache_bytes
                         ? fmt::format("reserves weights + overheads + --kv-cache-memory-bytes {}",
                                       format_bytes(*a.kv_cache_bytes))
                         : fmt::format(
                               "reserves {} x the device total CUDA reports ({}) = {} at "
                               "start-up, whatever the model needs; it refuses to start "
                               "when CUDA's free memory (MemFree on a unified pool) is below "
                               "that",
                               a.fraction.value_or(0.9), format_bytes(in.device_total_bytes),
                               format_bytes(s.claim.value_or(0)));
      p.notes.push_back(
          "on a unified pool the fraction is not a hard cap: the profiling run allocates beside "
          "the weights before the KV cache is sized, and reports show MemAvailable driven far "
          "lower than the fraction suggests (docs/serving.md)");
      break;
    case ServeEngine::sglang:
      p.claim = ClaimKind::static_fraction;
      p.claim_text = fmt::format(
          "holds {} x the device total ({}) for weights + KV, with activations and CUDA graphs "
          "beside it; the KV pool shrinks by whatever other processes hold when it starts",
          a.fraction.value_or(0.88), format_bytes(s.claim.value_or(0)));
      break;
    case ServeEngine::trtllm:
      p.claim = ClaimKind::free_fraction;
      p.claim_text = fmt::format(
          "takes {} of the memory free after the weights for KV blocks: it grows to fill what "
          "others leave (uncapped)",
          a.fraction.value_or(0.9));
      break;
    case ServeEngine::llama_cpp:
      p.claim = ClaimKind::sized_at_load;
      p.claim_text = fmt::format(
          "allocates weights, a KV cache for -c {} tokens ({} slot{}) and the compute buffer once "
          "at load{}",
          ctx_total, a.parallel, a.parallel == 1 ? "" : "s",
          a.mmap ? "; with mmap the file stays in the page cache (reclaimable, counted as used by "
                   "CUDA's free memory)"
                 : "");
      break;
    case ServeEngine::ollama:
      p.claim = ClaimKind::on_demand;
      p.claim_text = fmt::format(
          "loads a model on its first request (num_ctx {} x {} parallel = {} tokens of KV), keeps "
          "up to {} loaded, and unloads each after OLLAMA_KEEP_ALIVE ({}) idle: the pool is free "
          "only between loads",
          context, a.parallel, ctx_total, a.loaded_models, a.keep_alive.value_or("5m"));
      if (a.loaded_models > 1) {
        p.notes.push_back(fmt::format(
            "each further loaded model adds its own weights + KV + compute buffer (up to {} "
            "models)",
            a.loaded_models));
      }
      break;
  }

  // The budget and the largest values that fit it.
  p.verdict = plan::verdict_for(p.footprint_bytes, in.budget_bytes,
                                in.budget_given ? std::nullopt : in.pool);
  const std::uint64_t budget = in.budget_bytes;
  if (!ggml) {
    std::uint64_t pool_kv = p.kv_cache_bytes;
    if (a.engine != ServeEngine::trtllm && in.device_total_bytes > 0) {
      const std::uint64_t beside = saturating_add(s.host, s.outside_fraction);
      const double f = std::floor(static_cast<double>(sub_floor(budget, beside)) /
                                  static_cast<double>(in.device_total_bytes) * 100.0) /
                       100.0;
      p.largest_fraction = std::min(1.0, f);
      // The asked fraction does not fit the budget: size the context at the one that does.
      if (p.footprint_bytes > budget && !a.kv_cache_bytes && f > 0) {
        ServeArgs at = a;
        at.fraction = f;
        const std::uint64_t checkpoint = in.model.checkpoint_bytes.value_or(all_weights) / tp;
        pool_kv = size_fraction_engine(arch, at, p.weights_bytes, checkpoint, p.kv, context,
                                       in.device_total_bytes, budget)
                      .kv_bytes;
        p.largest_context_at = f;
      }
    }
    p.largest_context =
        std::min<std::uint64_t>(longest_sequence_in(p.kv, static_cast<double>(pool_kv)),
                                arch.max_context > 0 ? arch.max_context : UINT64_MAX);
  } else {
    // Bisect the total context: the compute buffer grows with it when flash attention is off.
    const auto fits_total = [&](std::uint64_t total) {
      return size_ggml_engine(arch, a, p.weights_bytes, p.kv, total).footprint <= budget;
    };
    std::uint64_t lo = 0;
    std::uint64_t hi = std::max<std::uint64_t>(ctx_total, 1) * 2;
    while (fits_total(hi) && hi < (1ULL << 32)) hi *= 2;
    while (lo + 1 < hi) {
      const std::uint64_t mid = lo + (hi - lo) / 2;
      (fits_total(mid) ? lo : hi) = mid;
    }
    const std::uint64_t per = std::max<std::uint64_t>(1, a.parallel);
    // Past the model's trained context the engines extend RoPE: the cap is the model's, per slot.
    if (arch.max_context > 0) lo = std::min(lo, arch.max_context * per);
    p.largest_context = a.engine == ServeEngine::ollama ? lo / per : lo;
    if (a.engine == ServeEngine::ollama) {
      std::uint64_t slots = 0;
      while (slots < 4096 && fits_total(context * (slots + 1))) ++slots;
      p.largest_parallel = slots;
    }
  }
  for (const auto& d : a.defaults) p.notes.push_back("default: " + d);
  for (const auto& n : a.notes) p.notes.push_back(n);
  for (const auto& n : in.model.notes) p.notes.push_back(n);
  return p;
}

}  // namespace sparkops::serving
