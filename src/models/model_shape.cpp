#include "models/model_shape.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "models/catalogue.hpp"

namespace sparkops::models {

namespace {

std::uint64_t q_dim(const Architecture& a) {
  return a.heads * a.head_dim;
}
std::uint64_t kv_dim(const Architecture& a) {
  return a.kv_heads * a.head_dim;
}

std::uint64_t linear_total(const LinearMap& m) {
  return m.d_in * m.d_out * m.copies;
}

// Per-layer parameters outside the linear maps: norms, q/k norms, sinks.
std::uint64_t layer_other(const Architecture& a) {
  std::uint64_t n = (a.post_norms ? 4 : 2) * a.hidden;
  if (a.qk_norm) n += 2 * a.head_dim;
  if (a.attn_sinks) n += a.heads;
  return n;
}

// Biases of the layer's linear maps (and router) per layer, all experts.
std::uint64_t layer_biases(const Architecture& a) {
  std::uint64_t n = 0;
  if (a.qkv_bias) n += q_dim(a) + 2 * kv_dim(a);
  if (a.o_bias) n += a.hidden;
  const std::uint64_t experts = a.experts == 0 ? 1 : a.experts;
  if (a.mlp_bias) {
    const std::uint64_t up = a.mlp == MlpKind::gated ? 2 * a.intermediate : a.intermediate;
    n += experts * (up + a.hidden);
  }
  if (a.experts > 0 && a.router_bias) n += a.experts;
  return n;
}

std::uint64_t layer_biases_active(const Architecture& a) {
  if (a.experts == 0) return layer_biases(a);
  Architecture one = a;
  one.experts = a.experts_per_token;
  std::uint64_t n = layer_biases(one);
  if (a.router_bias) n += a.experts - a.experts_per_token;  // the router sees every expert
  return n;
}

}  // namespace

std::vector<LinearMap> layer_linears(const Architecture& a) {
  std::vector<LinearMap> maps;
  maps.push_back({"q_proj", a.hidden, q_dim(a), 1, true});
  maps.push_back({"k_proj", a.hidden, kv_dim(a), 1, true});
  maps.push_back({"v_proj", a.hidden, kv_dim(a), 1, true});
  maps.push_back({"o_proj", q_dim(a), a.hidden, 1, true});
  const std::uint64_t copies = a.experts == 0 ? 1 : a.experts;
  if (a.mlp == MlpKind::gated) {
    maps.push_back({"gate_proj", a.hidden, a.intermediate, copies, false});
    maps.push_back({"up_proj", a.hidden, a.intermediate, copies, false});
    maps.push_back({"down_proj", a.intermediate, a.hidden, copies, false});
  } else {
    maps.push_back({"fc1", a.hidden, a.intermediate, copies, false});
    maps.push_back({"fc2", a.intermediate, a.hidden, copies, false});
  }
  return maps;
}

ParamCounts count_params(const Architecture& a) {
  ParamCounts c;
  c.embedding = a.vocab * a.hidden;
  c.lm_head = a.tied_embeddings ? 0 : a.vocab * a.hidden;
  std::uint64_t linear = 0;
  std::uint64_t linear_active = 0;
  for (const auto& m : layer_linears(a)) {
    linear += linear_total(m);
    const std::uint64_t active_copies = m.copies > 1 ? a.experts_per_token : 1;
    linear_active += m.d_in * m.d_out * active_copies;
  }
  const std::uint64_t router = a.experts > 0 ? a.hidden * a.experts : 0;
  c.linear = a.layers * (linear + router + layer_biases(a));
  c.other = a.layers * layer_other(a) + a.hidden /* final norm */ + a.extra_params;
  c.total = c.embedding + c.lm_head + c.linear + c.other;
  const std::uint64_t active_linear = a.layers * (linear_active + router + layer_biases_active(a));
  c.active = c.embedding + c.lm_head + active_linear + c.other;
  return c;
}

std::uint64_t active_params_excluding_embedding(const ParamCounts& c) {
  // Tied models keep the (shared) matrix because the unembedding still uses it.
  return c.lm_head == 0 ? c.active : c.active - c.embedding;
}

Status check_plausible(const Architecture& a, std::string_view what) {
  // Largest real values today: hidden 16384 (Llama-405B), vocab 262144 (Gemma-3), 256 experts
  // (DeepSeek-V3), intermediate 53248 (405B); the bounds leave two orders of magnitude.
  const std::pair<const char*, std::pair<std::uint64_t, std::uint64_t>> fields[] = {
      {"hidden_size", {a.hidden, 1ULL << 20}},
      {"num_hidden_layers", {a.layers, 1ULL << 14}},
      {"num_attention_heads", {a.heads, 1ULL << 14}},
      {"num_key_value_heads", {a.kv_heads, 1ULL << 14}},
      {"head_dim", {a.head_dim, 1ULL << 16}},
      {"intermediate_size", {a.intermediate, 1ULL << 24}},
      {"vocab_size", {a.vocab, 1ULL << 24}},
      {"num_experts", {a.experts, 1ULL << 16}},
      {"extra_params", {a.extra_params, 1ULL << 44}},
      {"sliding_window", {a.sliding_window, 1ULL << 32}},
      {"kv_lora_rank", {a.kv_lora_rank, 1ULL << 20}},
      {"qk_rope_head_dim", {a.qk_rope_head_dim, 1ULL << 16}},
      {"max_position_embeddings", {a.max_context, 1ULL << 32}},
  };
  for (const auto& [name, vb] : fields) {
    if (vb.first > vb.second) {
      return fail(Errc::malformed, fmt::format("{}: {} {} is implausible (bound {})", what, name,
                                               vb.first, vb.second));
    }
  }
  // The same terms as count_params, in floating point, so the integer count cannot overflow.
  const double h = static_cast<double>(a.hidden);
  const double attn =
      h * static_cast<double>(a.heads + 2 * a.kv_heads) * static_cast<double>(a.head_dim) +
      static_cast<double>(a.heads * a.head_dim) * h;
  const double experts = static_cast<double>(a.experts == 0 ? 1 : a.experts);
  const double mlp = experts * 3.0 * h * static_cast<double>(a.intermediate);
  const double total = static_cast<double>(a.layers) * (attn + mlp + 8.0 * h + experts * h) +
                       2.0 * static_cast<double>(a.vocab) * h + static_cast<double>(a.extra_params);
  if (total > kMaxPlausibleParams) {
    return fail(Errc::malformed,
                fmt::format("{}: the shape gives {:.3g} parameters, over the 100 T plausibility "
                            "bound",
                            what, total));
  }
  return {};
}

bool ArchOverrides::any() const {
  return hidden || layers || heads || kv_heads || intermediate || vocab || tied;
}

std::string_view model_source_name(ModelSource s) {
  switch (s) {
    case ModelSource::catalogue:
      return "catalogue";
    case ModelSource::directory:
      return "directory";
    case ModelSource::config_file:
      return "config_file";
    case ModelSource::safetensors:
      return "safetensors";
    case ModelSource::gguf:
      return "gguf";
    case ModelSource::hf_cache:
      return "hf_cache";
    case ModelSource::hub:
      return "hub";
    case ModelSource::params:
      return "params";
  }
  return "catalogue";
}

namespace {

using nlohmann::json;

std::optional<std::uint64_t> get_u64(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer() || it->get<std::int64_t>() < 0) return std::nullopt;
  return it->get<std::uint64_t>();
}

bool get_bool(const json& j, const char* key, bool fallback) {
  const auto it = j.find(key);
  return it != j.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

// Sliding-window layers, MLA and the context length, as the modeling code decides them:
//   layer_types ["sliding_attention", "full_attention", ...] (transformers >= 4.53 configs: Gemma,
//   gpt-oss, Qwen3-Next) names each layer; without it, Gemma-2 alternates (even layers slide),
//   Gemma-3 slides all but every sliding_window_pattern-th layer, Qwen2 slides only with
//   use_sliding_window, and any other family with a sliding_window slides every layer (Mistral
//   v0.1, Phi-3). MLA: kv_lora_rank and qk_rope_head_dim (DeepSeek-V2/V3, Kimi-K2).
void read_cache_layout(const json& j, Architecture& a) {
  a.max_context = get_u64(j, "max_position_embeddings").value_or(0);
  a.kv_lora_rank = get_u64(j, "kv_lora_rank").value_or(0);
  if (a.kv_lora_rank > 0) a.qk_rope_head_dim = get_u64(j, "qk_rope_head_dim").value_or(0);
  const auto window = get_u64(j, "sliding_window");
  if (!window || *window == 0) return;
  std::uint64_t sliding = 0;
  if (const auto it = j.find("layer_types"); it != j.end() && it->is_array() && !it->empty()) {
    // One entry per layer; a shorter list (abbreviated configs) is read as a repeating pattern.
    for (std::uint64_t i = 0; i < a.layers; ++i) {
      const auto& t = (*it)[static_cast<std::size_t>(i % it->size())];
      if (t.is_string() && t.get<std::string>() == "sliding_attention") ++sliding;
    }
  } else if (a.family == "gemma2") {
    sliding = (a.layers + 1) / 2;
  } else if (a.family.rfind("gemma3", 0) == 0) {
    const auto pattern = get_u64(j, "sliding_window_pattern").value_or(6);
    sliding = pattern > 0 ? a.layers - a.layers / pattern : 0;
  } else if (a.family.rfind("qwen", 0) == 0 && !get_bool(j, "use_sliding_window", false)) {
    sliding = 0;
  } else {
    sliding = a.layers;
  }
  if (sliding == 0 || sliding > a.layers) return;
  a.sliding_window = *window;
  a.sliding_layers = sliding;
}

}  // namespace

Result<Architecture> parse_config_json(std::string_view text, std::string_view source) {
  json root = json::parse(text.begin(), text.end(), nullptr, false);
  if (root.is_discarded()) {
    return fail(Errc::malformed,
                fmt::format("{}: not valid JSON (malformed or truncated)", source));
  }
  if (!root.is_object()) return fail(Errc::malformed, fmt::format("{}: not a JSON object", source));
  const json& top = root;
  // Multimodal configs (Gemma-3, Llama-4 ...) nest the language model under text_config.
  const json& j =
      root.contains("text_config") && root["text_config"].is_object() ? root["text_config"] : root;
  Architecture a;
  if (const auto it = top.find("model_type"); it != top.end() && it->is_string()) {
    a.family = it->get<std::string>();
  }
  if (const auto it = j.find("model_type"); it != j.end() && it->is_string()) {
    a.family = it->get<std::string>();
  }
  auto required = [&](const char* key, std::uint64_t& out) -> Status {
    const auto v = get_u64(j, key);
    if (!v || *v == 0) {
      return fail(Errc::malformed, fmt::format("{}: missing or invalid \"{}\"", source, key));
    }
    out = *v;
    return {};
  };
  for (const auto& [key, field] :
       {std::pair{"hidden_size", &a.hidden}, std::pair{"num_hidden_layers", &a.layers},
        std::pair{"num_attention_heads", &a.heads}, std::pair{"vocab_size", &a.vocab}}) {
    if (auto s = required(key, *field); !s) return tl::unexpected(s.error());
  }
  a.kv_heads = get_u64(j, "num_key_value_heads").value_or(a.heads);
  if (a.kv_heads == 0) a.kv_heads = a.heads;
  a.head_dim = get_u64(j, "head_dim").value_or(a.hidden / a.heads);
  const std::string& f = a.family;
  const bool gemma = f.rfind("gemma", 0) == 0;
  a.tied_embeddings =
      get_bool(j, "tie_word_embeddings", get_bool(top, "tie_word_embeddings", gemma));
  a.experts = get_u64(j, "num_local_experts").value_or(get_u64(j, "num_experts").value_or(0));
  a.experts_per_token =
      get_u64(j, "num_experts_per_tok").value_or(get_u64(j, "experts_per_token").value_or(0));
  if (a.experts > 0 && a.experts_per_token == 0) {
    return fail(Errc::malformed, fmt::format("{}: MoE config without num_experts_per_tok", source));
  }
  if (a.experts_per_token > a.experts) {
    return fail(Errc::malformed,
                fmt::format("{}: num_experts_per_tok {} exceeds the expert count {}", source,
                            a.experts_per_token, a.experts));
  }
  const auto moe_i = get_u64(j, "moe_intermediate_size");
  const auto dense_i = get_u64(j, "intermediate_size");
  if (a.experts > 0 && moe_i) {
    a.intermediate = *moe_i;
  } else if (dense_i) {
    a.intermediate = *dense_i;
  } else if (const auto n_inner = get_u64(j, "n_inner")) {
    a.intermediate = *n_inner;
  } else if (f == "falcon" || f == "gpt2" || f == "gpt_neox" || f == "phi") {
    a.intermediate = 4 * a.hidden;
  } else {
    return fail(Errc::malformed,
                fmt::format("{}: missing or invalid \"intermediate_size\"", source));
  }
  a.mlp = (f == "falcon" || f == "gpt2" || f == "gpt_neox" || f == "phi" || f == "gpt_bigcode")
              ? MlpKind::plain
              : MlpKind::gated;
  a.qkv_bias = f == "qwen2" || f == "qwen2_moe" || get_bool(j, "attention_bias", false);
  a.o_bias = get_bool(j, "attention_bias", false) || f == "gpt_oss";
  a.mlp_bias = get_bool(j, "mlp_bias", false) || f == "gpt_oss";
  if (f == "gpt_oss") a.qkv_bias = true;
  a.router_bias = f == "gpt_oss";
  a.attn_sinks = f == "gpt_oss";
  a.qk_norm = f == "qwen3" || f == "qwen3_moe" || f == "gemma3" || f == "gemma3_text";
  a.post_norms = f == "gemma2" || f == "gemma3" || f == "gemma3_text";
  a.needs_eager_attention = f == "gpt_oss" || (j.contains("attn_logit_softcapping") &&
                                               !j["attn_logit_softcapping"].is_null());
  if (a.head_dim == 0 || a.kv_heads > a.heads) {
    return fail(Errc::malformed, fmt::format("{}: inconsistent heads/head_dim", source));
  }
  read_cache_layout(j, a);
  if (auto ok = check_plausible(a, source); !ok) return tl::unexpected(ok.error());
  return a;
}

Result<ModelShape> shape_from_params(std::uint64_t params, const ArchOverrides& o,
                                     std::string* assumed) {
  const auto& cat = catalogue();
  const CatalogueEntry* nearest = nullptr;
  double best = std::numeric_limits<double>::max();
  for (const auto& e : cat) {
    if (e.arch.experts > 0) continue;  // a bare count is a dense model
    const double d = std::fabs(
        std::log(static_cast<double>(count_params(e.arch).total) / static_cast<double>(params)));
    if (d < best) {
      best = d;
      nearest = &e;
    }
  }
  if (nearest == nullptr) return fail(Errc::not_found, "catalogue is empty");
  ModelShape s;
  s.arch = nearest->arch;
  if (assumed != nullptr) *assumed = nearest->name;
  Architecture& a = s.arch;
  if (o.hidden) a.hidden = *o.hidden;
  if (o.layers) a.layers = *o.layers;
  if (o.heads) a.heads = *o.heads;
  if (o.kv_heads) a.kv_heads = *o.kv_heads;
  if (o.intermediate) a.intermediate = *o.intermediate;
  if (o.vocab) a.vocab = *o.vocab;
  if (o.tied) a.tied_embeddings = *o.tied;
  if (o.hidden || o.heads) {
    if (a.heads == 0 || a.hidden % a.heads != 0) {
      return fail(Errc::invalid_argument, "--heads: must divide --hidden");
    }
    a.head_dim = a.hidden / a.heads;
    if (!o.kv_heads && a.kv_heads > a.heads) a.kv_heads = a.heads;
  }
  if (a.kv_heads > a.heads) return fail(Errc::invalid_argument, "--kv-heads: exceeds --heads");
  for (const auto& [flag, v] :
       {std::pair{"--hidden", a.hidden}, std::pair{"--layers", a.layers},
        std::pair{"--heads", a.heads}, std::pair{"--kv-heads", a.kv_heads},
        std::pair{"--intermediate", a.intermediate}, std::pair{"--vocab", a.vocab}}) {
    if (v == 0) return fail(Errc::invalid_argument, fmt::format("{}: must be > 0", flag));
  }
  a.extra_params = 0;
  if (auto ok = check_plausible(a, "architecture flags"); !ok) {
    return fail(Errc::invalid_argument, ok.error().detail);
  }
  ParamCounts c = count_params(a);
  const std::uint64_t fixed = c.embedding + c.lm_head + c.other;
  if (params <= fixed) {
    return fail(Errc::invalid_argument,
                fmt::format("--params: {} is smaller than the embeddings and norms of the given "
                            "shape ({})",
                            params, fixed));
  }
  c.linear = params - fixed;
  c.total = params;
  c.active = params;
  s.params = c;
  s.name = fmt::format("{:.1f}B", static_cast<double>(params) / 1e9);
  return s;
}

}  // namespace sparkops::models
