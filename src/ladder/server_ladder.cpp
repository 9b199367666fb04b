#include "ladder/server_ladder.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "base/units.hpp"
#include "ladder/ladder_advice.hpp"

namespace sparkops::ladder {

namespace {

using serving::ServeEngine;

bool is_fraction_engine(ServeEngine e) {
  return e == ServeEngine::vllm || e == ServeEngine::sglang;
}

std::string_view context_flag(ServeEngine e) {
  switch (e) {
    case ServeEngine::vllm:
      return "--max-model-len";
    case ServeEngine::sglang:
      return "--context-length";
    case ServeEngine::trtllm:
      return "--max_seq_len";
    case ServeEngine::ollama:
      return "OLLAMA_CONTEXT_LENGTH=";
    case ServeEngine::llama_cpp:
      return "-c";
  }
  return "--max-model-len";
}

std::string set_flag(ServeEngine e, std::string_view flag, std::uint64_t v) {
  if (e == ServeEngine::ollama) return fmt::format("{}{}", flag, v);
  return fmt::format("{} {}", flag, v);
}

std::string plan_command(const ServerFailure& f, const std::vector<std::string>& engine_flags) {
  const std::string model = f.model_arg.empty() ? std::string("MODEL") : f.model_arg;
  return fmt::format("sparkops plan {} --serve {} -- {}", model,
                     serving::serve_engine_name(f.engine), fmt::join(engine_flags, " "));
}

// The fraction the text's free memory allows, two decimals down (vLLM compares free >= total x f).
std::optional<double> fraction_from_text(const serving::ServerLogFacts& x) {
  if (!x.free_gib || !x.total_gib || *x.total_gib <= 0) return std::nullopt;
  return std::floor(*x.free_gib / *x.total_gib * 100.0) / 100.0;
}

StepAdvice hold_advice(const ServerFailure& f) {
  StepAdvice a;
  a.step = LadderStep::server_hold;
  const auto& x = f.facts;
  const auto flag = context_flag(f.engine);
  std::optional<std::uint64_t> context;
  if (x.estimated_max_model_len) {
    context = x.estimated_max_model_len;
    a.details.push_back(fmt::format(
        "vLLM's own figure: the KV pool it could build holds one sequence of {} tokens{}", *context,
        x.kv_needed_gib && x.kv_available_gib
            ? fmt::format(" ({:.2f} GiB needed for the asked length, {:.2f} GiB available)",
                          *x.kv_needed_gib, *x.kv_available_gib)
            : std::string()));
  } else if (f.plan && f.plan->largest_context && *f.plan->largest_context < f.plan->context) {
    context = f.plan->largest_context;
    a.details.push_back(
        fmt::format("the serving plan: {} tokens per sequence fit the pool", *context));
  }
  if (context) {
    a.action = fmt::format("lower the context to {} tokens ({})", *context,
                           set_flag(f.engine, flag, *context));
    a.changes.push_back(set_flag(f.engine, flag, *context));
  } else {
    a.action = fmt::format(
        "lower what the server holds: halve the context ({}), the sequences "
        "served at once, or store the KV cache in 8 bits",
        flag);
    a.details.push_back(
        f.plan ? fmt::format("the serving plan holds {:.1f} sequences of {} tokens at this cap: "
                             "the context is not what failed; lower the sequences or the KV dtype",
                             f.plan->concurrency, f.plan->context)
               : "describe the server with `--serve ENGINE --serve-args \"FLAGS\"` for the exact "
                 "value that fits");
  }
  switch (f.engine) {
    case ServeEngine::vllm:
      a.changes.push_back("--kv-cache-dtype fp8 (halves the KV bytes per token)");
      if (f.plan && f.plan->args.parallel > 64)
        a.changes.push_back(fmt::format(
            "--max-num-seqs 64 and --max-num-batched-tokens {} (a smaller profile run: its "
            "activation peak is {} at {} tokens)",
            std::min<std::uint64_t>(f.plan->args.batch_tokens, 4096),
            format_bytes(f.plan->terms.size() > 2 ? f.plan->terms[2].bytes : 0),
            f.plan->args.batch_tokens));
      break;
    case ServeEngine::sglang:
      a.changes.push_back("--kv-cache-dtype fp8_e4m3; --max-running-requests lower");
      break;
    case ServeEngine::llama_cpp:
      a.changes.push_back("-ctk q8_0 -ctv q8_0 (with flash attention) halves the KV cache");
      a.changes.push_back("-np 1: -c is shared by every slot");
      break;
    case ServeEngine::ollama:
      a.changes.push_back("OLLAMA_NUM_PARALLEL=1 (the KV cache is num_ctx x parallel)");
      a.changes.push_back("OLLAMA_KV_CACHE_TYPE=q8_0 with OLLAMA_FLASH_ATTENTION=1");
      break;
    case ServeEngine::trtllm:
      a.changes.push_back("--max_batch_size lower; --max_num_tokens lower");
      break;
  }
  if (f.plan && context) {
    a.commands.push_back(plan_command(f, {set_flag(f.engine, flag, *context)}));
  }
  return a;
}

StepAdvice cap_advice(const ServerFailure& f) {
  StepAdvice a;
  a.step = LadderStep::server_cap;
  const auto& x = f.facts;
  if (is_fraction_engine(f.engine)) {
    const std::string_view flag =
        f.engine == ServeEngine::vllm ? "--gpu-memory-utilization" : "--mem-fraction-static";
    std::optional<double> to;
    if (x.admission_refused) {
      to = fraction_from_text(x);
      if (to) {
        a.details.push_back(fmt::format(
            "the text says {:.2f} of {:.2f} GiB was free at start-up and {} asked for {:.2f}: the "
            "largest fraction that passes the check is {:.2f} (page cache counts as used: flush "
            "first)",
            x.free_gib.value_or(0), x.total_gib.value_or(0), flag, x.fraction.value_or(0), *to));
      }
    } else if (x.no_cache_blocks || (f.plan && f.plan->kv_cache_bytes == 0)) {
      // Weights + profile run already exceed the fraction: the fraction must go up, within the
      // budget, or the model must shrink (step 4).
      if (f.plan && f.plan->largest_fraction) to = f.plan->largest_fraction;
      a.details.push_back(
          "no KV blocks were left: weights, the profile run and CUDA graphs took the whole "
          "fraction. Raise it within the budget (other jobs capped or stopped), else step 4");
    } else if (f.plan && f.plan->largest_fraction) {
      to = std::min(f.plan->largest_fraction.value_or(1.0), f.plan->args.fraction.value_or(0.9));
      a.details.push_back(fmt::format("the serving plan: the budget allows {:.2f}", *to));
    }
    if (to && *to > 0) {
      a.action = fmt::format("set the server's cap: {} {:.2f}", flag, *to);
      a.changes.push_back(fmt::format("{} {:.2f}", flag, *to));
      if (f.plan) a.commands.push_back(plan_command(f, {fmt::format("{} {:.2f}", flag, *to)}));
    } else {
      a.action =
          fmt::format("lower {} below what is free at start-up (sparkops status: free now)", flag);
    }
    a.commands.push_back("sparkops procs");
    a.details.push_back("and stop or cap the other GPU servers `sparkops procs` lists");
    return a;
  }
  if (f.engine == ServeEngine::ollama) {
    a.action = "keep one model loaded: OLLAMA_MAX_LOADED_MODELS=1, and unload idle models sooner";
    a.changes = {"OLLAMA_MAX_LOADED_MODELS=1",
                 "OLLAMA_KEEP_ALIVE=1m (or 0: unload after each request)"};
    a.commands = {"ollama ps", "ollama stop MODEL"};
    a.details.push_back(
        "Ollama has no byte cap: every loaded model holds its weights, KV and graph");
    return a;
  }
  if (f.engine == ServeEngine::llama_cpp) {
    a.action = "offload fewer layers (-ngl)";
    if (f.plan && f.plan->pool && f.plan->kv.full_layers + f.plan->kv.sliding_layers > 0) {
      const std::uint64_t layers = f.plan->kv.full_layers + f.plan->kv.sliding_layers;
      const std::uint64_t per_layer = f.plan->weights_bytes / layers;
      const std::uint64_t rest = f.plan->footprint_bytes - f.plan->weights_bytes;
      const std::uint64_t free_now = f.plan->pool->free_now_bytes;
      const std::uint64_t ngl =
          per_layer == 0 || free_now <= rest ? 0 : std::min(layers, (free_now - rest) / per_layer);
      a.action = fmt::format("offload {} of {} layers: -ngl {}", ngl, layers, ngl);
      a.changes.push_back(fmt::format("-ngl {}", ngl));
      a.details.push_back(fmt::format(
          "{} per layer; CUDA's free memory now {} after the KV cache and compute buffer ({})",
          format_bytes(per_layer), format_bytes(free_now), format_bytes(rest)));
    }
    a.details.push_back(
        "on a unified pool the layers left on the CPU stay in the same memory (mmap'd page cache, "
        "reclaimable): -ngl helps a failing CUDA allocation, not the pool's total");
    return a;
  }
  a.action = "lower --kv_cache_free_gpu_memory_fraction (it takes a share of whatever is free)";
  a.changes.push_back("--kv_cache_free_gpu_memory_fraction 0.5");
  return a;
}

StepAdvice scale_advice(const ServerFailure& f) {
  StepAdvice a;
  a.step = LadderStep::scale;
  a.action = "serve a smaller or more quantized model";
  if (f.plan) {
    const auto& p = *f.plan;
    // Stored bits per weight of common formats: fp8 8; ggml Q8_0 34 B / 32 values = 8.5;
    // Q4_K 144 B / 256 values = 4.5 (ggml-common.h); 4-bit AWQ/GPTQ g128: 4 + fp16 scale and
    // packed zero per 128 = 4.16.
    const double params = static_cast<double>(p.params);
    const std::uint64_t rest = p.footprint_bytes - p.weights_bytes;
    struct Option {
      std::string_view name;
      double bits;
    };
    const bool ggml = f.engine == ServeEngine::llama_cpp || f.engine == ServeEngine::ollama;
    const Option options[] = {
        ggml ? Option{"GGUF Q8_0", 8.5} : Option{"FP8", 8.0},
        ggml ? Option{"GGUF Q4_K_M (Q4_K blocks)", 4.5} : Option{"AWQ/GPTQ 4-bit g128", 4.16}};
    for (const auto& o : options) {
      const auto w = static_cast<std::uint64_t>(params * o.bits / 8.0);
      a.details.push_back(fmt::format(
          "{}: weights ~{} (now {}), footprint ~{} of a {} "
          "budget ({})",
          o.name, format_bytes(w), format_bytes(p.weights_bytes), format_bytes(w + rest),
          format_bytes(p.budget_bytes), w + rest <= p.budget_bytes ? "fits" : "does not fit"));
    }
  }
  a.commands.push_back(
      fmt::format("sparkops plan SMALLER_MODEL --serve {}", serving::serve_engine_name(f.engine)));
  return a;
}

}  // namespace

StepAdvice advise_server_step(LadderStep s, const ServerFailure& f,
                              const std::optional<host::PoolView>& pool) {
  switch (s) {
    case LadderStep::server_hold:
      return hold_advice(f);
    case LadderStep::server_cap:
      return cap_advice(f);
    case LadderStep::scale:
      return scale_advice(f);
    default: {
      StepAdvice a = advise_step(LadderStep::flush, std::nullopt, pool);
      if (f.facts.free_gib && f.facts.total_gib) {
        a.details.push_back(fmt::format(
            "the server saw {:.2f} of {:.2f} GiB free at start-up: CUDA's free memory is MemFree "
            "on a unified pool, and the page cache is not in it",
            *f.facts.free_gib, *f.facts.total_gib));
      }
      return a;
    }
  }
}

std::vector<std::string> server_failure_notes(const ServerFailure& f) {
  std::vector<std::string> out;
  const auto& x = f.facts;
  out.push_back(
      fmt::format("a {} failure: the server's ladder applies (context and sequences, "
                  "then its cap, then the model), not the training steps",
                  serving::serve_engine_title(f.engine)));
  if (x.admission_refused && x.fraction && x.requested_gib && x.free_gib) {
    out.push_back(
        fmt::format("vLLM asked for {:.2f} x the device total = {:.2f} GiB and found "
                    "{:.2f} GiB free: the fraction is of the total, not of what is free",
                    *x.fraction, *x.requested_gib, *x.free_gib));
  }
  if (x.ollama_required_gib && x.ollama_available_gib) {
    out.push_back(fmt::format("Ollama's estimate needs {:.1f} GiB and found {:.1f} GiB available",
                              *x.ollama_required_gib, *x.ollama_available_gib));
  }
  if (x.cuda_malloc_failed && x.cuda_alloc_mib) {
    out.push_back(
        fmt::format("a {:.0f} MiB CUDA buffer could not be allocated", *x.cuda_alloc_mib));
  }
  return out;
}

}  // namespace sparkops::ladder
