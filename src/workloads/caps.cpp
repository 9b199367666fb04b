#include "workloads/caps.hpp"

#include <cmath>

#include <fmt/format.h>

#include "base/checked_cast.hpp"
#include "base/text.hpp"
#include "base/units.hpp"

namespace sparkops::workloads {

namespace {

std::optional<std::string> env_value(const host::EnvList& env, std::string_view name) {
  std::optional<std::string> v;
  for (const auto& [k, val] : env) {
    if (k == name) v = val;  // the last definition wins, as getenv sees it
  }
  return v;
}

struct Fraction {
  std::optional<double> value;
  std::string raw;
};

// A fraction flag: present and in (0, 1] -> value; present but invalid -> raw only.
Fraction fraction_flag(const std::vector<std::string>& argv,
                       const std::vector<std::string_view>& names) {
  Fraction f;
  const auto raw = find_flag_value(argv, names);
  if (!raw) return f;
  f.raw = *raw;
  const auto v = parse_double(*raw);
  if (v && std::isfinite(*v) && *v > 0 && *v <= 1.0) f.value = *v;
  return f;
}

CapInfo fraction_cap(const Fraction& f, std::string_view flag, std::optional<double> default_value,
                     std::string_view absent_text) {
  CapInfo cap;
  if (f.value) {
    cap.state = CapState::capped;
    cap.fraction = f.value;
    cap.text = fmt::format("{} {}", flag, *f.value);
    return cap;
  }
  cap.state = CapState::uncapped;
  cap.fraction = default_value;
  cap.text = std::string(absent_text);
  if (!f.raw.empty())
    cap.notes.push_back(
        fmt::format("{} {}: not a fraction in (0, 1], ignored", flag, quote_for_message(f.raw)));
  return cap;
}

CapInfo vllm_cap(const Classification& kind, const std::vector<std::string>& argv) {
  if (kind.role != Role::server) {
    CapInfo cap;
    cap.text = "unknown (flags are on the API server)";
    return cap;
  }
  if (const auto kv =
          find_flag_value(argv, {"--kv-cache-memory-bytes", "--kv_cache_memory_bytes"})) {
    if (const auto bytes = parse_vllm_bytes(*kv)) {
      CapInfo cap;
      cap.state = CapState::capped;
      cap.kv_cache_bytes = bytes;
      cap.text = fmt::format("kv-cache-memory-bytes {}", format_bytes(*bytes));
      cap.notes.push_back("KV cache only: weights and activations come on top");
      return cap;
    }
  }
  auto cap =
      fraction_cap(fraction_flag(argv, {"--gpu-memory-utilization", "--gpu_memory_utilization"}),
                   "gpu-memory-utilization", 0.9, "default 0.9");
  cap.notes.push_back("fraction of the device total; overshoots on unified memory while profiling");
  return cap;
}

CapInfo llama_cpp_cap(const std::vector<std::string>& argv, const host::EnvList& env) {
  CapInfo cap;
  cap.state = CapState::fixed_at_load;
  std::vector<std::string> parts;
  if (const auto ngl = find_flag_value(argv, {"-ngl", "--n-gpu-layers", "--gpu-layers"})) {
    parts.push_back("-ngl " + *ngl);
  }
  if (const auto ctx = find_flag_value(argv, {"-c", "--ctx-size"})) {
    parts.push_back("-c " + *ctx);
    if (*ctx == "0")
      cap.notes.push_back("-c 0: context length taken from the model (can be large)");
  }
  if (has_flag(argv, {"--mlock"})) {
    parts.push_back("--mlock");
    cap.notes.push_back("--mlock: weights pinned, never reclaimed under pressure");
  }
  if (has_flag(argv, {"--no-mmap"})) {
    parts.push_back("--no-mmap");
    cap.notes.push_back("--no-mmap: weights copied into anonymous memory, not page cache");
  }
  if (const auto fit = find_flag_value(argv, {"--fit"}); fit && *fit != "off") {
    parts.push_back("--fit " + *fit);
    cap.notes.push_back("--fit: sized to the memory free when it started");
  }
  if (env_value(env, "GGML_CUDA_ENABLE_UNIFIED_MEMORY") == "1") {
    cap.notes.push_back(
        "GGML_CUDA_ENABLE_UNIFIED_MEMORY=1: CUDA allocations may spill into host pages");
  }
  cap.text =
      parts.empty() ? "fixed at load" : fmt::format("fixed at load ({})", fmt::join(parts, " "));
  return cap;
}

CapInfo ollama_cap(const Classification& kind, const std::vector<std::string>& argv,
                   const host::EnvList& env, bool env_readable) {
  CapInfo cap;
  if (kind.role == Role::runner) {
    cap.state = CapState::fixed_at_load;
    std::vector<std::string> parts;
    if (const auto ctx = find_flag_value(argv, {"--ctx-size"})) parts.push_back("ctx " + *ctx);
    if (const auto ngl = find_flag_value(argv, {"--n-gpu-layers"})) parts.push_back("-ngl " + *ngl);
    cap.text = parts.empty() ? "one loaded model"
                             : fmt::format("one loaded model ({})", fmt::join(parts, ", "));
    return cap;
  }
  cap.state = CapState::uncapped;
  if (!env_readable) {
    cap.text = "uncapped (environment unreadable)";
    return cap;
  }
  const auto max_models = env_value(env, "OLLAMA_MAX_LOADED_MODELS");
  const auto keep_alive = env_value(env, "OLLAMA_KEEP_ALIVE");
  const auto overhead = env_value(env, "OLLAMA_GPU_OVERHEAD");
  std::vector<std::string> parts;
  parts.push_back(fmt::format("max {} models", max_models.value_or("3 (default)")));
  parts.push_back(fmt::format("keep-alive {}", keep_alive.value_or("5m (default)")));
  if (overhead) {
    const auto bytes = parse_u64(*overhead);
    parts.push_back(fmt::format("gpu-overhead {}", bytes ? format_bytes(*bytes) : *overhead));
  }
  if (keep_alive && (keep_alive->starts_with("-"))) {
    cap.notes.push_back(
        fmt::format("OLLAMA_KEEP_ALIVE={}: loaded models stay resident while idle", *keep_alive));
  }
  cap.text = fmt::format("uncapped ({})", fmt::join(parts, ", "));
  return cap;
}

CapInfo trainer_cap(const host::EnvList& env, bool env_readable) {
  CapInfo cap;
  cap.state = CapState::uncapped;
  cap.text = "uncapped";
  auto conf = env_value(env, "PYTORCH_CUDA_ALLOC_CONF");
  if (!conf) conf = env_value(env, "PYTORCH_ALLOC_CONF");
  if (conf) {
    cap.notes.push_back(
        fmt::format("PYTORCH_CUDA_ALLOC_CONF={}: tunes the allocator, caps nothing", *conf));
  } else if (!env_readable) {
    cap.notes.push_back("environment unreadable (another user's process)");
  }
  return cap;
}

}  // namespace

std::string_view cap_state_name(CapState s) {
  switch (s) {
    case CapState::capped:
      return "capped";
    case CapState::fixed_at_load:
      return "fixed";
    case CapState::uncapped:
      return "uncapped";
  }
  return "uncapped";
}

std::optional<std::string> find_flag_value(const std::vector<std::string>& argv,
                                           const std::vector<std::string_view>& names) {
  std::optional<std::string> value;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    const std::string_view a = argv[i];
    for (const auto name : names) {
      if (a == name && i + 1 < argv.size()) {
        value = argv[i + 1];
      } else if (a.size() > name.size() && a.starts_with(name) && a[name.size()] == '=') {
        value = std::string(a.substr(name.size() + 1));
      }
    }
  }
  return value;
}

bool has_flag(const std::vector<std::string>& argv, const std::vector<std::string_view>& names) {
  for (const auto& a : argv) {
    for (const auto name : names) {
      if (a == name) return true;
    }
  }
  return false;
}

std::optional<std::uint64_t> parse_vllm_bytes(std::string_view text) {
  const auto lead = parse_leading_double(trim(text));
  if (!lead || !std::isfinite(lead->value) || lead->value < 0) return std::nullopt;
  const std::string_view unit = trim(lead->rest);
  double mult = 1;
  if (unit.empty())
    mult = 1;
  else if (unit == "k")
    mult = 1e3;
  else if (unit == "m")
    mult = 1e6;
  else if (unit == "g")
    mult = 1e9;
  else if (unit == "t")
    mult = 1e12;
  else if (unit == "K")
    mult = static_cast<double>(kKiB);
  else if (unit == "M")
    mult = static_cast<double>(kMiB);
  else if (unit == "G")
    mult = static_cast<double>(kGiB);
  else if (unit == "T")
    mult = static_cast<double>(kGiB) * 1024.0;
  else
    return std::nullopt;
  const double bytes = lead->value * mult;
  return checked_round<std::uint64_t>(bytes);
}

CapInfo parse_cap(const Classification& kind, const std::vector<std::string>& argv,
                  const host::EnvList& env, bool env_readable) {
  switch (kind.engine) {
    case Engine::vllm:
      return vllm_cap(kind, argv);
    case Engine::sglang:
      if (kind.role != Role::server)
        return CapInfo{CapState::uncapped, "unknown (flags are on the server)", {}, {}, {}};
      return fraction_cap(fraction_flag(argv, {"--mem-fraction-static", "--mem_fraction_static"}),
                          "mem-fraction-static", std::nullopt, "auto (uncapped)");
    case Engine::tgi: {
      if (kind.role != Role::server)
        return CapInfo{CapState::uncapped, "unknown (flags are on the launcher)", {}, {}, {}};
      auto f = fraction_flag(argv, {"--cuda-memory-fraction"});
      if (!f.value && f.raw.empty()) {
        if (const auto e = env_value(env, "CUDA_MEMORY_FRACTION")) {
          f.raw = *e;
          if (const auto v = parse_double(*e); v && *v > 0 && *v <= 1.0) f.value = v;
        }
      }
      if (f.value && *f.value >= 1.0) f.value.reset();
      return fraction_cap(f, "cuda-memory-fraction", 1.0, "default 1.0 (uncapped)");
    }
    case Engine::tensorrt_llm:
      return fraction_cap(fraction_flag(argv, {"--kv_cache_free_gpu_memory_fraction",
                                               "--kv-cache-free-gpu-memory-fraction"}),
                          "kv_cache_free_gpu_memory_fraction", 0.9, "default 0.9 of free memory");
    case Engine::ollama:
      return ollama_cap(kind, argv, env, env_readable);
    case Engine::llama_cpp:
      return llama_cpp_cap(argv, env);
    case Engine::trainer:
    case Engine::jupyter:
    case Engine::other:
      return trainer_cap(env, env_readable);
  }
  return CapInfo{};
}

std::optional<std::uint64_t> cap_claim_bytes(const CapInfo& cap, std::uint64_t device_total_bytes) {
  if (cap.kv_cache_bytes) return cap.kv_cache_bytes;
  if (!cap.fraction || device_total_bytes == 0) return std::nullopt;
  return checked_round<std::uint64_t>(*cap.fraction * static_cast<double>(device_total_bytes));
}

const std::vector<std::string_view>& cap_env_prefixes() {
  static const std::vector<std::string_view> prefixes = {"OLLAMA_", "PYTORCH_CUDA_ALLOC_CONF",
                                                         "PYTORCH_ALLOC_CONF", "GGML_CUDA_",
                                                         "CUDA_MEMORY_FRACTION"};
  return prefixes;
}

}  // namespace sparkops::workloads
