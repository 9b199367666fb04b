#pragma once
// An inference server's command line, read the way the engine reads it (docs/serving.md "Flags"):
// vLLM, SGLang, Ollama, llama.cpp's llama-server and TensorRT-LLM's trtllm-serve, each with its own
// spelling (`--max-model-len`, `-c`, `OLLAMA_NUM_PARALLEL=4`, ...) and its own defaults at the
// version docs/serving.md names. Flags the planner does not size are ignored (the engines have
// hundreds); a flag it sizes with a value it cannot read is an Error naming the flag.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "host/proc_pid.hpp"

namespace sparkops::serving {

enum class ServeEngine { vllm, sglang, ollama, llama_cpp, trtllm };
std::string_view serve_engine_name(ServeEngine e);   // "vllm", "sglang", "ollama", "llamacpp", ...
std::string_view serve_engine_title(ServeEngine e);  // "vLLM", "llama.cpp (llama-server)", ...
// "vllm", "sglang", "ollama", "llamacpp" (also "llama.cpp", "llama-server"), "trtllm".
std::optional<ServeEngine> parse_serve_engine(std::string_view text);

// A shell-like split: whitespace separates words; '...' and "..." quote; a backslash escapes the
// next character outside single quotes. Leading NAME=VALUE words (as in `OLLAMA_NUM_PARALLEL=4
// ollama serve`) go to `env`. An unterminated quote is an Error naming `what`.
struct CommandLine {
  std::vector<std::string> argv;
  host::EnvList env;
};
Result<CommandLine> split_command_line(std::string_view text, std::string_view what);

// KV cache element types as the engines name them.
struct KvDtype {
  std::string name = "bf16";   // "bf16", "fp8", "q8_0", "q4_0" ...
  double bytes_per_value = 2;  // ggml block types: block bytes / 32 values (q8_0 34/32)
};

// What the engine will hold, normalised. `*_given` says whether the user set it or the engine's
// default was taken (the default is named in `defaults`).
struct ServeArgs {
  ServeEngine engine = ServeEngine::vllm;
  std::optional<std::string> model;          // the model the command names, when it names one
  std::optional<std::uint64_t> max_context;  // tokens per sequence (absent: the model's own)
  bool context_is_total = false;             // llama.cpp/Ollama: -c / num_ctx spans all slots
  std::uint64_t parallel = 1;                // sequences served at once
  bool parallel_given = false;
  KvDtype kv_dtype;  // "auto": the model's dtype (bf16)
  bool kv_dtype_given = false;
  std::optional<double> fraction;  // vLLM / SGLang / TRT-LLM memory fraction
  bool fraction_given = false;
  std::optional<std::uint64_t> kv_cache_bytes;  // vLLM --kv-cache-memory-bytes
  std::uint64_t tensor_parallel = 1;
  std::optional<std::int64_t> gpu_layers;  // llama.cpp -ngl; negative or absent: all
  std::uint64_t batch_tokens = 0;          // vLLM max-num-batched-tokens / llama.cpp -ub
  bool enforce_eager = false;              // vLLM --enforce-eager: no CUDA graphs
  std::uint64_t loaded_models = 1;         // Ollama OLLAMA_MAX_LOADED_MODELS
  std::optional<std::string> keep_alive;   // Ollama OLLAMA_KEEP_ALIVE
  bool mmap = true;                        // llama.cpp/Ollama: weights mmap'd from the file
  bool mlock = false;
  bool flash_attention = true;        // llama.cpp -fa (auto: on with CUDA); Ollama env
  std::vector<std::string> defaults;  // "max-num-seqs 1024 (vLLM default on >= 70 GiB)"
  std::vector<std::string> notes;
};

// Reads `argv` (the engine's flags; a leading program/subcommand such as `vllm serve MODEL` or
// `python -m sglang.launch_server` is skipped) and `env` (NAME=VALUE words) for `engine`.
// `device_total_bytes` picks vLLM's size-dependent defaults (>= 70 GiB: 8192 batched tokens and
// 1024 sequences); 0 = unknown, the large-device defaults are assumed (GB10 reports 121.6 GiB).
Result<ServeArgs> parse_serve_args(ServeEngine engine, const std::vector<std::string>& argv,
                                   const host::EnvList& env, std::uint64_t device_total_bytes);

// A KV dtype as the engine spells it: vLLM/SGLang auto|bfloat16|float16|fp8|fp8_e4m3|fp8_e5m2;
// llama.cpp/Ollama f32|f16|bf16|q8_0|q4_0|q4_1|q5_0|q5_1|iq4_nl. nullopt when unknown.
std::optional<KvDtype> parse_kv_dtype(ServeEngine engine, std::string_view text);

}  // namespace sparkops::serving
