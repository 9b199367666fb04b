#pragma once
// What the OOM classifier says about a text (docs/oom-ladder.md "Classifying a failure"): the kind
// of failure, the phase it happened in, and the facts the text states. Facts are optional: "the
// text did not say" is never 0.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sparkops {

enum class OomKind {
  not_oom,
  cuda_allocator,       // PyTorch caching allocator: "CUDA out of memory. Tried to allocate ..."
  accelerator_runtime,  // "CUDA error: out of memory", cudaMalloc/ggml, NvMap error 12, MPS, NCCL,
                        // XLA
  host_oom_killer,      // kernel global OOM kill, or a launcher's exit -9/137 (SIGKILL)
  cgroup_oom_killer,    // kernel memcg OOM kill (CONSTRAINT_MEMCG), container OOMKilled
  server_admission,     // an inference server refusing to start for lack of memory
  driver,               // NVRM NV_ERR_NO_MEMORY and nothing else
};

enum class OomPhase { unknown, load, step };

// How the kind was established: a message that states it, or an inference (exit code -9 / 137).
enum class Evidence { stated, inferred };

std::string_view oom_kind_name(OomKind k);    // "cuda_allocator", ... stable for JSON
std::string_view oom_phase_name(OomPhase p);  // "load" | "step" | "unknown"
std::optional<OomKind> parse_oom_kind(std::string_view name);
std::optional<OomPhase> parse_oom_phase(std::string_view name);

struct OomReport {
  OomKind kind = OomKind::not_oom;
  OomPhase phase = OomPhase::unknown;
  Evidence evidence = Evidence::stated;
  std::optional<std::uint64_t> requested_bytes;  // the allocation or admission that failed
  std::optional<std::uint64_t> capacity_bytes;   // device / pool capacity as the text reports it
  std::optional<std::uint64_t> free_bytes;       // free / available as the text reports it
  std::optional<std::uint32_t> process_pid;      // the victim (kernel kill, launcher) when named
  std::optional<std::string> process_name;
  bool bitsandbytes_on_stack = false;  // a bitsandbytes frame or dequantize call in the text
  std::uint64_t signal_count = 0;      // OOM signals seen, all kinds
  std::string evidence_text;           // the matched signal, e.g. "CUDA out of memory"
};

}  // namespace sparkops
