#pragma once
// `sparkops plan MODEL --serve ENGINE`: what an inference server will hold in the unified pool
// (docs/serving.md). Weights from the model resolution (safetensors dtypes, GGUF quant types,
// pre-quantized configs), the KV cache from the architecture, the engine's own overheads, and the
// way each engine claims memory: vLLM reserves its fraction of the device total at start-up,
// SGLang a static fraction for weights + KV, TensorRT-LLM a fraction of what is free after the
// weights, llama.cpp and Ollama what -c / num_ctx x parallel needs (Ollama loads on demand).
// Pure: the pool is given.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "host/pool.hpp"
#include "models/model_shape.hpp"
#include "plan/plan.hpp"
#include "serving/engine_args.hpp"
#include "serving/kv_cache.hpp"

namespace sparkops::serving {

// One line of the worksheet: what it is, its bytes, and where the figure comes from.
struct ServingTerm {
  std::string name;  // "weights", "kv_cache", "activation_peak", "cuda_graphs", ...
  std::uint64_t bytes = 0;
  std::string source;  // "vllm/v1/worker/gpu_worker.py determine_available_memory (v0.11)"
};

enum class ClaimKind {
  device_fraction,  // vLLM: fraction x device total, reserved at start-up whatever the model needs
  static_fraction,  // SGLang: fraction x total for weights + KV; activations outside it
  free_fraction,    // TensorRT-LLM: fraction of the memory free after the weights
  sized_at_load,    // llama.cpp: weights + KV for -c tokens + compute buffer, once
  on_demand,        // Ollama: like llama.cpp per loaded model; loads on request, unloads later
};
std::string_view claim_kind_name(ClaimKind k);

struct ServingPlan {
  std::string model_name;
  ServeArgs args;
  std::uint64_t params = 0;         // parameters on this device
  std::uint64_t weights_bytes = 0;  // on this device (tensor parallel splits them)
  std::string weights_text;         // "bf16 safetensors (exact)", "GGUF Q4_K_M", ...
  KvLayout kv;
  double kv_bytes_per_token = 0;      // every layer
  double kv_bytes_beyond_window = 0;  // full-attention layers only (== above without SWA)
  std::uint64_t context = 0;          // tokens per sequence
  std::uint64_t kv_cache_bytes = 0;   // the KV pool the engine allocates
  double kv_shortfall_bytes = 0;      // > 0: the pool cannot hold one sequence of `context`
  double concurrency = 0;             // sequences of `context` tokens the pool holds
  std::uint64_t tokens_held = 0;      // tokens the pool holds at `context` per sequence
  std::vector<ServingTerm> terms;     // the worksheet, weights first
  ClaimKind claim = ClaimKind::device_fraction;
  std::optional<std::uint64_t> claim_bytes;  // what the cap reserves, when it is a byte figure
  std::uint64_t footprint_bytes = 0;         // what the running server holds in its space
  std::uint64_t startup_peak_bytes = 0;      // while loading (mmap'd file pages) and profiling
  std::string claim_text;                    // one line: how this engine claims memory
  std::uint64_t device_total_bytes = 0;
  std::uint64_t budget_bytes = 0;
  std::optional<host::PoolView> pool;
  // Sized in a discrete GPU's memory (ServingInput::on_card), not in the unified pool: the text
  // says where the footprint lives.
  bool on_card = false;
  plan::Verdict verdict = plan::Verdict::wont_fit;
  // The largest values that fit, with everything else as given:
  std::optional<std::uint64_t> largest_context;   // per sequence (vLLM/SGLang/TRT: in the pool)
  std::optional<std::uint64_t> largest_parallel;  // llama.cpp/Ollama: slots at `context`
  std::optional<double> largest_fraction;         // vLLM/SGLang: the budget's fraction
  std::optional<double> largest_context_at;       // the fraction largest_context assumes, when
                                                  // the asked one does not fit the budget
  std::vector<std::string> notes;
};

struct ServingInput {
  models::ResolvedModel model;
  ServeArgs args;
  std::uint64_t device_total_bytes = 0;  // what CUDA reports (GB10: MemTotal)
  std::uint64_t budget_bytes = 0;
  bool budget_given = false;  // --budget N: the verdict ignores what is free now
  std::optional<host::PoolView> pool;
  bool on_card = false;  // the device total and budget are a discrete GPU's (no pool is given)
};

// Errors: a context the model cannot state and the flags do not give, a context beyond the
// model's, a fraction engine without a device total.
Result<ServingPlan> make_serving_plan(const ServingInput& in);

// Assumptions shared by every engine (docs/serving.md "Overheads"):
inline constexpr std::uint64_t kCudaContextBytes = 1ULL << 30;    // context + cuBLAS workspaces
inline constexpr std::uint64_t kPythonProcessBytes = 1ULL << 30;  // one torch+CUDA process's RSS

// Bytes of the per-token activations of one decoder layer's forward at `tokens` tokens (bf16):
// the residual and normed hidden states, q/k/v, the MLP's gate/up output and its activation (per
// routed expert for MoE). The engines' profile runs and CUDA graph pools hold this.
std::uint64_t forward_activation_bytes(const models::Architecture& a, std::uint64_t tokens);

}  // namespace sparkops::serving
