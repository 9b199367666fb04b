#pragma once
// What the OOM classifier says about a text (docs/oom-ladder.md "Classifying a failure"): the kind
// of failure, the phase it happened in, and the facts the text states. Facts are optional: "the
// text did not say" is never 0.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sparkops::ladder {

enum class OomKind {
  not_oom,
  cuda_allocator,       // PyTorch caching allocator: "CUDA out of memory. Tried to allocate ..."
  accelerator_runtime,  // "CUDA error: out of memory", cudaMalloc/ggml, NvMap error 12, MPS, NCCL,
                        // XLA
  host_oom_killer,      // kernel global OOM kill, or a launcher's exit -9/137 (SIGKILL)
  cgroup_oom_killer,    // kernel memcg OOM kill (CONSTRAINT_MEMCG), container OOMKilled
  server_admission,     // an inference server refusing to start for lack of memory
  driver,               // the NVIDIA kernel driver: NVRM NV_ERR_NO_MEMORY and nothing else, or an
                        // Xid 31 GPU memory page fault (a fault, not exhaustion: see
                        // OomReport::memory_exhausted)
};

// What the job was doing when it failed (docs/oom-ladder.md "Phase"): start-up (weights, engine,
// KV cache, CUDA graphs), a training or generation step, an evaluation pass, a checkpoint save.
enum class OomPhase { unknown, load, step, eval, save };

// How the kind was established: a message that states it, or an inference (exit code -9 / 137).
enum class Evidence { stated, inferred };

std::string_view oom_kind_name(OomKind k);    // "cuda_allocator", ... stable for JSON
std::string_view oom_phase_name(OomPhase p);  // "load" | "step" | "eval" | "save" | "unknown"
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
  // The line of the text that decided the phase (whitespace runs as single spaces, valid UTF-8,
  // at most kPhaseEvidenceMax bytes); empty when the phase is unknown.
  std::string phase_evidence;
  // kind not_oom only: the OOM-looking message the text does carry (an illegal memory access, a
  // SIGSEGV exit, a tolerated NvMap error 12), empty when there is none; the phase is then the
  // phase of that message.
  std::string near_miss;
  // False when the failure is a memory fault rather than a lack of memory (NVRM Xid 31): the memory
  // ladder does not apply to it.
  bool memory_exhausted = true;
};

inline constexpr std::size_t kPhaseEvidenceMax = 160;

// Whether the report is an out-of-memory failure the ladder applies to.
inline bool is_memory_failure(const OomReport& r) {
  return r.kind != OomKind::not_oom && r.memory_exhausted;
}

}  // namespace sparkops::ladder
