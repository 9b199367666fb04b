#pragma once
// What an inference server's own log says about memory (docs/serving.md "Log lines"): which engine
// wrote it and the figures of its start-up accounting and refusals. Lines as the engines print
// them (vLLM v0.10-v0.11 vllm/v1/worker/gpu_worker.py and vllm/v1/core/kv_cache_utils.py,
// llama.cpp ggml-cuda.cu / llama-context.cpp, Ollama llm/server.go):
//   Free memory on device (110.34/121.69 GiB) on startup. Desired GPU memory utilization is
//     (0.87, 105.87 GiB). Actual usage is 86.93 GiB for consumed memory (weights + non-torch),
//     3.6 GiB for peak activation, and 0.26 GiB for CUDAGraph memory.
//   ValueError: Free memory on device cuda:0 (74.9/142.5 GiB) on startup is less than desired GPU
//     memory utilization (0.9, 128.25 GiB).
//   ... (16.0 GiB KV cache is needed, which is larger than the available KV cache memory (8.5 GiB).
//     Based on the available memory, the estimated maximum model length is 69632.
//   No available memory for the cache blocks.
//   ggml_backend_cuda_buffer_type_alloc_buffer: allocating 1234.00 MiB on device 0: cudaMalloc
//     failed: out of memory
//   model requires more system memory (44.0 GiB) than is available (7.6 GiB)
// Streaming: feed chunks of any size; lines are cut at 64 KiB, so memory stays bounded.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "serving/engine_args.hpp"

namespace sparkops::serving {

struct ServerLogFacts {
  std::optional<ServeEngine> engine;  // the engine whose markers the text carries most
  // vLLM start-up accounting and admission
  std::optional<double> free_gib, total_gib;      // "Free memory on device (F/T GiB)"
  std::optional<double> fraction, requested_gib;  // "(0.87, 105.87 GiB)"
  std::optional<double> consumed_gib, activation_gib, cudagraph_gib;
  bool admission_refused = false;                         // "... is less than desired ..."
  std::optional<double> kv_needed_gib, kv_available_gib;  // one max-length sequence vs the pool
  std::optional<std::uint64_t> estimated_max_model_len;
  bool no_cache_blocks = false;  // "No available memory for the cache blocks"
  // llama.cpp / Ollama
  std::optional<double> cuda_alloc_mib;  // "allocating X MiB ... cudaMalloc failed"
  bool cuda_malloc_failed = false;
  std::optional<double> ollama_required_gib, ollama_available_gib;
};

class ServerLogScanner {
 public:
  void feed(std::string_view chunk);
  ServerLogFacts finish();

 private:
  void line(std::string_view l);
  std::string partial_;
  bool truncated_ = false;
  ServerLogFacts facts_;
  std::uint64_t votes_[5] = {0, 0, 0, 0, 0};
};

ServerLogFacts scan_server_log(std::string_view text);

// vLLM's KV pool from its start-up accounting: fraction x total - (consumed + activation peak +
// CUDA graphs), in the units given (vllm/v1/worker/gpu_worker.py determine_available_memory).
double vllm_kv_pool(double total, double fraction, double consumed, double activation,
                    double cudagraph);

}  // namespace sparkops::serving
