#include "serving/engine_args.hpp"

#include <cmath>

#include <fmt/format.h>

#include "base/text.hpp"
#include "base/units.hpp"
#include "workloads/caps.hpp"
#include "workloads/classify.hpp"

namespace sparkops::serving {

namespace {

bool is_env_word(std::string_view w) {
  const auto eq = w.find('=');
  if (eq == std::string_view::npos || eq == 0) return false;
  for (std::size_t i = 0; i < eq; ++i) {
    const char c = w[i];
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' ||
                    (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

std::optional<std::string> env_value(const host::EnvList& env, std::string_view name) {
  std::optional<std::string> v;
  for (const auto& [k, val] : env) {
    if (k == name) v = val;
  }
  return v;
}

// Integers as the engines accept them: vLLM's human-readable "32k" (10^3) / "32K" (2^10) for
// --max-model-len; plain integers elsewhere.
Result<std::uint64_t> count_value(std::string_view flag, std::string_view raw) {
  const auto v = workloads::parse_vllm_bytes(raw);
  if (!v || *v == 0) {
    return fail(Errc::invalid_argument,
                fmt::format("{} {}: not a positive count", flag, quote_for_message(raw)));
  }
  return *v;
}

Result<double> fraction_value(std::string_view flag, std::string_view raw) {
  const auto v = parse_double(raw);
  if (!v || !std::isfinite(*v) || *v <= 0 || *v > 1.0) {
    return fail(Errc::invalid_argument,
                fmt::format("{} {}: not a fraction in (0, 1]", flag, quote_for_message(raw)));
  }
  return *v;
}

// The first word after the program (and `serve`): vLLM's and trtllm-serve's positional MODEL.
std::optional<std::string> positional_model(const std::vector<std::string>& argv) {
  const workloads::Invocation inv = workloads::parse_invocation(argv);
  std::size_t i = inv.first_arg;
  if (i < argv.size() && argv[i] == "serve") ++i;
  if (i < argv.size() && !argv[i].starts_with("-")) return argv[i];
  return std::nullopt;
}

using Names = std::vector<std::string_view>;

Status read_count(const std::vector<std::string>& argv, const Names& names,
                  std::optional<std::uint64_t>& out) {
  if (const auto raw = workloads::find_flag_value(argv, names)) {
    auto v = count_value(names.front(), *raw);
    if (!v) return tl::unexpected(v.error());
    out = *v;
  }
  return {};
}

Status read_kv(ServeArgs& a, const std::optional<std::string>& raw, std::string_view flag) {
  if (!raw) return {};
  const auto kv = parse_kv_dtype(a.engine, *raw);
  if (!kv) {
    return fail(Errc::invalid_argument,
                fmt::format("{} {}: not a KV cache type this engine accepts", flag,
                            quote_for_message(*raw)));
  }
  a.kv_dtype = *kv;
  a.kv_dtype_given = kv->name != "auto";
  if (a.kv_dtype.name == "auto") a.kv_dtype = KvDtype{"bf16", 2};
  return {};
}

Status vllm_args(ServeArgs& a, const std::vector<std::string>& argv, std::uint64_t device_total) {
  a.model = workloads::find_flag_value(argv, {"--model"});
  if (!a.model) a.model = positional_model(argv);
  if (auto s = read_count(argv, {"--max-model-len", "--max_model_len"}, a.max_context); !s)
    return s;
  std::optional<std::uint64_t> seqs;
  if (auto s = read_count(argv, {"--max-num-seqs", "--max_num_seqs"}, seqs); !s) return s;
  std::optional<std::uint64_t> batched;
  if (auto s = read_count(argv, {"--max-num-batched-tokens", "--max_num_batched_tokens"}, batched);
      !s)
    return s;
  // vllm/engine/arg_utils.py (v0.10-v0.11) get_batch_defaults: a device of >= 70 GiB that is not an
  // A100 gets 8192 batched tokens and 1024 sequences for the OpenAI server, else 2048 and 256.
  const bool large = device_total == 0 || device_total >= 70 * kGiB;
  a.parallel_given = seqs.has_value();
  a.parallel = seqs.value_or(large ? 1024 : 256);
  a.batch_tokens = batched.value_or(large ? 8192 : 2048);
  if (!seqs) a.defaults.push_back(fmt::format("max-num-seqs {} (vLLM default)", a.parallel));
  if (!batched)
    a.defaults.push_back(fmt::format("max-num-batched-tokens {} (vLLM default)", a.batch_tokens));
  if (const auto raw = workloads::find_flag_value(
          argv, {"--gpu-memory-utilization", "--gpu_memory_utilization"})) {
    auto f = fraction_value("--gpu-memory-utilization", *raw);
    if (!f) return tl::unexpected(f.error());
    a.fraction = *f;
    a.fraction_given = true;
  } else {
    a.fraction = 0.9;
    a.defaults.push_back("gpu-memory-utilization 0.9 (vLLM default)");
  }
  if (const auto raw = workloads::find_flag_value(
          argv, {"--kv-cache-memory-bytes", "--kv_cache_memory_bytes"})) {
    const auto b = workloads::parse_vllm_bytes(*raw);
    if (!b || *b == 0)
      return fail(Errc::invalid_argument,
                  fmt::format("--kv-cache-memory-bytes {}: not a size", quote_for_message(*raw)));
    a.kv_cache_bytes = *b;
  }
  std::optional<std::uint64_t> tp;
  if (auto s = read_count(argv, {"--tensor-parallel-size", "--tensor_parallel_size", "-tp"}, tp);
      !s)
    return s;
  a.tensor_parallel = tp.value_or(1);
  a.enforce_eager = workloads::has_flag(argv, {"--enforce-eager", "--enforce_eager"});
  return read_kv(a, workloads::find_flag_value(argv, {"--kv-cache-dtype", "--kv_cache_dtype"}),
                 "--kv-cache-dtype");
}

Status sglang_args(ServeArgs& a, const std::vector<std::string>& argv) {
  a.model = workloads::find_flag_value(argv, {"--model-path", "--model", "--model_path"});
  if (!a.model) a.model = positional_model(argv);
  if (auto s = read_count(argv, {"--context-length", "--context_length"}, a.max_context); !s)
    return s;
  std::optional<std::uint64_t> running;
  if (auto s = read_count(argv, {"--max-running-requests", "--max_running_requests"}, running); !s)
    return s;
  a.parallel_given = running.has_value();
  a.parallel = running.value_or(0);  // 0: sized from the KV pool
  std::optional<std::uint64_t> chunk;
  if (auto s = read_count(argv, {"--chunked-prefill-size", "--chunked_prefill_size"}, chunk); !s)
    return s;
  a.batch_tokens = chunk.value_or(8192);
  if (!chunk) a.defaults.push_back("chunked-prefill-size 8192 (SGLang default)");
  std::optional<std::uint64_t> tp;
  if (auto s = read_count(argv, {"--tp-size", "--tp", "--tensor-parallel-size"}, tp); !s) return s;
  a.tensor_parallel = tp.value_or(1);
  if (const auto raw =
          workloads::find_flag_value(argv, {"--mem-fraction-static", "--mem_fraction_static"})) {
    auto f = fraction_value("--mem-fraction-static", *raw);
    if (!f) return tl::unexpected(f.error());
    a.fraction = *f;
    a.fraction_given = true;
  } else {
    // python/sglang/srt/server_args.py (v0.4.x) __post_init__: 0.88 at tp 1, 0.87 at tp 2, 0.85
    // at tp 4, 0.83 at tp 8 (later releases derive it from the GPU size: same order on GB10).
    const std::uint64_t t = a.tensor_parallel;
    a.fraction = t >= 8 ? 0.83 : t >= 4 ? 0.85 : t >= 2 ? 0.87 : 0.88;
    a.defaults.push_back(fmt::format("mem-fraction-static {} (SGLang default)", *a.fraction));
  }
  a.enforce_eager = workloads::has_flag(argv, {"--disable-cuda-graph"});
  return read_kv(a, workloads::find_flag_value(argv, {"--kv-cache-dtype", "--kv_cache_dtype"}),
                 "--kv-cache-dtype");
}

Status llama_cpp_args(ServeArgs& a, const std::vector<std::string>& argv) {
  a.model = workloads::find_flag_value(argv, {"-m", "--model", "-hf", "--hf-repo"});
  a.context_is_total = true;
  if (const auto raw = workloads::find_flag_value(argv, {"-c", "--ctx-size"})) {
    const auto v = parse_u64(*raw);
    if (!v)
      return fail(Errc::invalid_argument,
                  fmt::format("-c {}: not a token count", quote_for_message(*raw)));
    if (*v > 0) a.max_context = *v;  // -c 0: the model's own context length
  } else {
    a.max_context = 4096;  // common/common.h: n_ctx = 4096
    a.defaults.push_back("-c 4096 (llama-server default)");
  }
  std::optional<std::uint64_t> np;
  if (auto s = read_count(argv, {"-np", "--parallel"}, np); !s) return s;
  a.parallel_given = np.has_value();
  a.parallel = np.value_or(1);
  std::optional<std::uint64_t> ub;
  if (auto s = read_count(argv, {"-ub", "--ubatch-size"}, ub); !s) return s;
  a.batch_tokens = ub.value_or(512);
  if (const auto raw =
          workloads::find_flag_value(argv, {"-ngl", "--n-gpu-layers", "--gpu-layers"})) {
    const auto v = parse_i64(*raw);
    if (!v)
      return fail(Errc::invalid_argument,
                  fmt::format("-ngl {}: not a layer count", quote_for_message(*raw)));
    a.gpu_layers = *v;
  }
  if (const auto fa = workloads::find_flag_value(argv, {"-fa", "--flash-attn"});
      fa && !fa->starts_with("-")) {
    a.flash_attention = !(*fa == "off" || *fa == "0" || *fa == "false");
  }
  a.mmap = !workloads::has_flag(argv, {"--no-mmap"});
  a.mlock = workloads::has_flag(argv, {"--mlock"});
  if (auto s = read_kv(a, workloads::find_flag_value(argv, {"-ctk", "--cache-type-k"}),
                       "--cache-type-k");
      !s)
    return s;
  const KvDtype k = a.kv_dtype;
  if (auto s = read_kv(a, workloads::find_flag_value(argv, {"-ctv", "--cache-type-v"}),
                       "--cache-type-v");
      !s)
    return s;
  // K and V may differ: the cache holds one of each, so the mean is the per-value size.
  if (k.name != a.kv_dtype.name) {
    a.kv_dtype = KvDtype{fmt::format("K {} / V {}", k.name, a.kv_dtype.name),
                         (k.bytes_per_value + a.kv_dtype.bytes_per_value) / 2};
  }
  if (!a.kv_dtype_given) a.kv_dtype = KvDtype{"f16", 2};
  return {};
}

Status ollama_args(ServeArgs& a, const host::EnvList& env) {
  a.context_is_total = true;
  if (const auto raw = env_value(env, "OLLAMA_CONTEXT_LENGTH")) {
    auto v = count_value("OLLAMA_CONTEXT_LENGTH", *raw);
    if (!v) return tl::unexpected(v.error());
    a.max_context = *v;
  } else {
    a.max_context = 4096;  // envconfig.ContextLength default (Ollama >= 0.6.4)
    a.defaults.push_back("OLLAMA_CONTEXT_LENGTH 4096 (Ollama default)");
  }
  if (const auto raw = env_value(env, "OLLAMA_NUM_PARALLEL")) {
    auto v = count_value("OLLAMA_NUM_PARALLEL", *raw);
    if (!v) return tl::unexpected(v.error());
    a.parallel = *v;
    a.parallel_given = true;
  } else {
    a.parallel = 1;
    a.defaults.push_back("OLLAMA_NUM_PARALLEL 1 (Ollama default)");
  }
  if (const auto raw = env_value(env, "OLLAMA_MAX_LOADED_MODELS")) {
    auto v = count_value("OLLAMA_MAX_LOADED_MODELS", *raw);
    if (!v) return tl::unexpected(v.error());
    a.loaded_models = *v;
  } else {
    a.loaded_models = 3;  // server/sched.go defaultModelsPerGPU
    a.defaults.push_back("OLLAMA_MAX_LOADED_MODELS 3 (Ollama default per GPU)");
  }
  a.keep_alive = env_value(env, "OLLAMA_KEEP_ALIVE");
  if (!a.keep_alive) a.defaults.push_back("OLLAMA_KEEP_ALIVE 5m (Ollama default)");
  if (auto s = read_kv(a, env_value(env, "OLLAMA_KV_CACHE_TYPE"), "OLLAMA_KV_CACHE_TYPE"); !s)
    return s;
  const auto fa = env_value(env, "OLLAMA_FLASH_ATTENTION");
  a.flash_attention = fa == "1" || fa == "true";
  if (a.kv_dtype_given && a.kv_dtype.name != "f16" && fa != "1" && fa != "true") {
    a.notes.push_back(fmt::format(
        "OLLAMA_KV_CACHE_TYPE={} needs flash attention: without OLLAMA_FLASH_ATTENTION=1 older "
        "releases fall back to f16, so f16 is planned",
        a.kv_dtype.name));
    a.kv_dtype = KvDtype{"f16", 2};
    a.kv_dtype_given = false;
  }
  if (!a.kv_dtype_given) a.kv_dtype = KvDtype{"f16", 2};
  a.batch_tokens = 512;  // api.Options NumBatch default
  return {};
}

Status trtllm_args(ServeArgs& a, const std::vector<std::string>& argv) {
  a.model = positional_model(argv);
  if (auto s = read_count(argv, {"--max_seq_len", "--max-seq-len"}, a.max_context); !s) return s;
  std::optional<std::uint64_t> batch;
  if (auto s = read_count(argv, {"--max_batch_size", "--max-batch-size"}, batch); !s) return s;
  a.parallel_given = batch.has_value();
  a.parallel = batch.value_or(2048);
  if (!batch) a.defaults.push_back("max_batch_size 2048 (trtllm-serve default)");
  std::optional<std::uint64_t> tokens;
  if (auto s = read_count(argv, {"--max_num_tokens", "--max-num-tokens"}, tokens); !s) return s;
  a.batch_tokens = tokens.value_or(8192);
  std::optional<std::uint64_t> tp;
  if (auto s = read_count(argv, {"--tp_size", "--tp-size"}, tp); !s) return s;
  a.tensor_parallel = tp.value_or(1);
  if (const auto raw = workloads::find_flag_value(
          argv, {"--kv_cache_free_gpu_memory_fraction", "--kv-cache-free-gpu-memory-fraction"})) {
    auto f = fraction_value("--kv_cache_free_gpu_memory_fraction", *raw);
    if (!f) return tl::unexpected(f.error());
    a.fraction = *f;
    a.fraction_given = true;
  } else {
    a.fraction = 0.9;
    a.defaults.push_back("kv_cache_free_gpu_memory_fraction 0.9 (trtllm-serve default)");
  }
  a.kv_dtype = KvDtype{"bf16", 2};
  return {};
}

}  // namespace

std::string_view serve_engine_name(ServeEngine e) {
  switch (e) {
    case ServeEngine::vllm:
      return "vllm";
    case ServeEngine::sglang:
      return "sglang";
    case ServeEngine::ollama:
      return "ollama";
    case ServeEngine::llama_cpp:
      return "llamacpp";
    case ServeEngine::trtllm:
      return "trtllm";
  }
  return "vllm";
}

std::string_view serve_engine_title(ServeEngine e) {
  switch (e) {
    case ServeEngine::vllm:
      return "vLLM";
    case ServeEngine::sglang:
      return "SGLang";
    case ServeEngine::ollama:
      return "Ollama";
    case ServeEngine::llama_cpp:
      return "llama.cpp (llama-server)";
    case ServeEngine::trtllm:
      return "TensorRT-LLM (trtllm-serve)";
  }
  return "vLLM";
}

std::optional<ServeEngine> parse_serve_engine(std::string_view text) {
  const std::string t = to_lower(text);
  if (t == "vllm") return ServeEngine::vllm;
  if (t == "sglang") return ServeEngine::sglang;
  if (t == "ollama") return ServeEngine::ollama;
  if (t == "llamacpp" || t == "llama.cpp" || t == "llama-server" || t == "llama_cpp")
    return ServeEngine::llama_cpp;
  if (t == "trtllm" || t == "tensorrt-llm" || t == "trtllm-serve") return ServeEngine::trtllm;
  return std::nullopt;
}

Result<CommandLine> split_command_line(std::string_view text, std::string_view what) {
  CommandLine out;
  std::vector<std::string> words;
  std::string cur;
  bool in_word = false;
  char quote = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote == '\'') {
      if (c == '\'') {
        quote = 0;
      } else {
        cur += c;
      }
      continue;
    }
    if (c == '\\' && i + 1 < text.size()) {
      cur += text[++i];
      in_word = true;
      continue;
    }
    if (quote == '"') {
      if (c == '"') {
        quote = 0;
      } else {
        cur += c;
      }
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (in_word) words.push_back(std::move(cur));
      cur.clear();
      in_word = false;
    } else {
      cur += c;
      in_word = true;
    }
  }
  if (quote != 0) {
    return fail(Errc::invalid_argument, fmt::format("{}: unterminated {} quote", what, quote));
  }
  if (in_word) words.push_back(std::move(cur));
  std::size_t i = 0;
  for (; i < words.size() && is_env_word(words[i]); ++i) {
    const auto eq = words[i].find('=');
    out.env.emplace_back(words[i].substr(0, eq), words[i].substr(eq + 1));
  }
  out.argv.assign(words.begin() + static_cast<std::ptrdiff_t>(i), words.end());
  return out;
}

std::optional<KvDtype> parse_kv_dtype(ServeEngine engine, std::string_view text) {
  const std::string t = to_lower(text);
  if (engine == ServeEngine::llama_cpp || engine == ServeEngine::ollama) {
    // ggml block sizes (ggml/src/ggml-common.h): 32 values per block.
    if (t == "f32") return KvDtype{"f32", 4};
    if (t == "f16") return KvDtype{"f16", 2};
    if (t == "bf16") return KvDtype{"bf16", 2};
    if (t == "q8_0") return KvDtype{"q8_0", 34.0 / 32};
    if (t == "q4_0") return KvDtype{"q4_0", 18.0 / 32};
    if (t == "q4_1") return KvDtype{"q4_1", 20.0 / 32};
    if (t == "q5_0") return KvDtype{"q5_0", 22.0 / 32};
    if (t == "q5_1") return KvDtype{"q5_1", 24.0 / 32};
    if (t == "iq4_nl") return KvDtype{"iq4_nl", 18.0 / 32};
    return std::nullopt;
  }
  if (t == "auto") return KvDtype{"auto", 2};
  if (t == "bfloat16" || t == "bf16") return KvDtype{"bf16", 2};
  if (t == "float16" || t == "half" || t == "fp16") return KvDtype{"fp16", 2};
  if (t == "fp8" || t == "fp8_e4m3" || t == "fp8_e5m2" || t == "fp8_inc")
    return KvDtype{std::string(t), 1};
  return std::nullopt;
}

Result<ServeArgs> parse_serve_args(ServeEngine engine, const std::vector<std::string>& argv,
                                   const host::EnvList& env, std::uint64_t device_total_bytes) {
  ServeArgs a;
  a.engine = engine;
  Status s;
  switch (engine) {
    case ServeEngine::vllm:
      s = vllm_args(a, argv, device_total_bytes);
      break;
    case ServeEngine::sglang:
      s = sglang_args(a, argv);
      break;
    case ServeEngine::llama_cpp:
      s = llama_cpp_args(a, argv);
      break;
    case ServeEngine::ollama:
      s = ollama_args(a, env);
      break;
    case ServeEngine::trtllm:
      s = trtllm_args(a, argv);
      break;
  }
  if (!s) return tl::unexpected(s.error());
  return a;
}

}  // namespace sparkops::serving
