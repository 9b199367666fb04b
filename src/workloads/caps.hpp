#pragma once
// Caps and claims: what a workload is allowed to take from the pool, read from its flags and
// environment (docs/domain.md "Memory on a unified pool").
//   vLLM   --gpu-memory-utilization F (default 0.9), --kv-cache-memory-bytes N: F of the DEVICE
//   total,
//          not of what is free, and not a hard cap on unified memory (it overshoots while
//          profiling).
//   SGLang --mem-fraction-static F (absent: chosen at start from the GPU size -> uncapped).
//   TGI    --cuda-memory-fraction F (default 1.0 -> uncapped).
//   TensorRT-LLM --kv_cache_free_gpu_memory_fraction F (of memory free after the weights).
//   Ollama OLLAMA_MAX_LOADED_MODELS, OLLAMA_GPU_OVERHEAD, OLLAMA_KEEP_ALIVE: no byte cap; it loads
//          models on demand, so the server is uncapped and its runners hold what they loaded.
//   llama.cpp -ngl/-c/--mlock/--no-mmap: sized once at load; its claim is what it holds.
//   trainers: PYTORCH_CUDA_ALLOC_CONF tunes the allocator but caps nothing -> uncapped.
// Both `--flag value` and `--flag=value` are accepted, and vLLM's underscore spelling
// (`--gpu_memory_utilization`).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "host/proc_pid.hpp"
#include "workloads/classify.hpp"

namespace sparkops::workloads {

enum class CapState {
  capped,         // an explicit limit the process honours (approximately, on unified memory)
  fixed_at_load,  // sized once when the model loads (llama.cpp); its claim is what it holds
  uncapped,       // no limit, or only a near-whole-device default
};
std::string_view cap_state_name(CapState s);  // "capped", "fixed", "uncapped"

struct CapInfo {
  CapState state = CapState::uncapped;
  std::string text;                             // "gpu-memory-utilization 0.5", "default 0.9"
  std::optional<double> fraction;               // of the device total (vLLM, SGLang, TGI, TRT-LLM)
  std::optional<std::uint64_t> kv_cache_bytes;  // vLLM --kv-cache-memory-bytes
  std::vector<std::string> notes;               // "--mlock: pinned, never reclaimed", ...
};

// The value of a flag in `--name value` or `--name=value` form; the last occurrence wins (as in
// argparse). `names` are alternative spellings.
std::optional<std::string> find_flag_value(const std::vector<std::string>& argv,
                                           const std::vector<std::string_view>& names);
bool has_flag(const std::vector<std::string>& argv, const std::vector<std::string_view>& names);

// vLLM's human-readable integers: "8589934592", "8g" (10^9), "8G" (2^30), "25.6k".
std::optional<std::uint64_t> parse_vllm_bytes(std::string_view text);

// Reads the cap of a workload's root process. `env` holds the variables read from
// /proc/PID/environ (empty when unreadable; `env_readable` says which).
CapInfo parse_cap(const Classification& kind, const std::vector<std::string>& argv,
                  const host::EnvList& env, bool env_readable);

// Bytes of the pool the cap lets the workload claim, given the device total (GB10: MemTotal).
// vLLM with --kv-cache-memory-bytes claims the KV bytes (weights come on top and show as actual).
// Absent for fixed_at_load and for uncapped workloads without a default fraction.
std::optional<std::uint64_t> cap_claim_bytes(const CapInfo& cap, std::uint64_t device_total_bytes);

// Environment variable prefixes the scanner reads from /proc/PID/environ for caps and notes.
const std::vector<std::string_view>& cap_env_prefixes();

}  // namespace sparkops::workloads
