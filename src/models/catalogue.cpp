#include "models/catalogue.hpp"

#include <algorithm>
#include <span>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/text.hpp"

namespace sparkops::embedded {
extern const std::string_view models_json;
}

namespace sparkops::models {

namespace {

using nlohmann::json;

Result<std::uint64_t> need_u64(const json& e, const char* key, std::string_view model) {
  const auto it = e.find(key);
  if (it == e.end() || !it->is_number_unsigned()) {
    return fail(Errc::malformed, fmt::format("catalogue: {}: missing \"{}\"", model, key));
  }
  return it->get<std::uint64_t>();
}

}  // namespace

Result<std::vector<CatalogueEntry>> parse_catalogue(std::string_view text) {
  const json root = json::parse(text.begin(), text.end(), nullptr, false);
  if (root.is_discarded() || !root.is_object() || !root.contains("models") ||
      !root["models"].is_array()) {
    return fail(Errc::malformed, "catalogue: not a {\"models\": [...]} document");
  }
  std::vector<CatalogueEntry> out;
  for (const auto& e : root["models"]) {
    CatalogueEntry c;
    c.name = e.value("name", "");
    if (c.name.empty()) return fail(Errc::malformed, "catalogue: an entry has no name");
    c.repo = e.value("repo", "");
    c.note = e.value("note", "");
    if (const auto it = e.find("aliases"); it != e.end() && it->is_array()) {
      for (const auto& a : *it) c.aliases.push_back(a.get<std::string>());
    }
    Architecture& a = c.arch;
    a.family = e.value("family", "");
    for (const auto& [key, field] :
         {std::pair{"hidden", &a.hidden}, std::pair{"layers", &a.layers},
          std::pair{"heads", &a.heads}, std::pair{"kv_heads", &a.kv_heads},
          std::pair{"intermediate", &a.intermediate}, std::pair{"vocab", &a.vocab}}) {
      auto v = need_u64(e, key, c.name);
      if (!v) return tl::unexpected(v.error());
      *field = *v;
    }
    a.head_dim = e.value("head_dim", a.hidden / a.heads);
    a.tied_embeddings = e.value("tied", false);
    a.mlp = e.value("mlp", std::string("gated")) == "plain" ? MlpKind::plain : MlpKind::gated;
    a.qkv_bias = e.value("qkv_bias", false);
    a.o_bias = e.value("o_bias", false);
    a.mlp_bias = e.value("mlp_bias", false);
    a.qk_norm = e.value("qk_norm", false);
    a.attn_sinks = e.value("attn_sinks", false);
    a.post_norms = e.value("post_norms", false);
    a.needs_eager_attention = e.value("eager", false);
    a.experts = e.value("experts", std::uint64_t{0});
    a.experts_per_token = e.value("experts_per_token", std::uint64_t{0});
    a.router_bias = e.value("router_bias", false);
    a.extra_params = e.value("extra_params", std::uint64_t{0});
    a.sliding_window = e.value("sliding_window", std::uint64_t{0});
    a.sliding_layers = e.value("sliding_layers", std::uint64_t{0});
    a.kv_lora_rank = e.value("kv_lora_rank", std::uint64_t{0});
    a.qk_rope_head_dim = e.value("qk_rope_head_dim", std::uint64_t{0});
    a.max_context = e.value("max_context", std::uint64_t{0});
    if (a.sliding_layers > a.layers || (a.sliding_window == 0) != (a.sliding_layers == 0)) {
      return fail(Errc::malformed,
                  fmt::format("catalogue: {}: sliding_window/sliding_layers disagree", c.name));
    }
    out.push_back(std::move(c));
  }
  return out;
}

const std::vector<CatalogueEntry>& catalogue() {
  // Immutable table parsed once from bytes compiled into the binary; a parse failure is a build
  // defect caught by the catalogue tests, so it is a bug (exception), not an expected error.
  static const std::vector<CatalogueEntry> entries = [] {
    auto parsed = parse_catalogue(embedded::models_json);
    if (!parsed) throw std::logic_error(parsed.error().detail);
    return std::move(*parsed);
  }();
  return entries;
}

const CatalogueEntry* find_in_catalogue(std::string_view name) {
  const std::string wanted = to_lower(trim(name));
  auto strip_org = [](std::string_view s) {
    const auto slash = s.rfind('/');
    return slash == std::string_view::npos ? s : s.substr(slash + 1);
  };
  const std::string wanted_bare = to_lower(strip_org(wanted));
  for (const auto& e : catalogue()) {
    if (to_lower(e.name) == wanted || to_lower(e.repo) == wanted ||
        to_lower(e.name) == wanted_bare || to_lower(strip_org(e.repo)) == wanted_bare) {
      return &e;
    }
    for (const auto& alias : e.aliases) {
      if (to_lower(alias) == wanted_bare) return &e;
    }
  }
  return nullptr;
}

namespace {

constexpr std::string_view kFinetuneSuffixes[] = {
    "instruct", "chat", "it",      "hf",     "base",     "pt",      "sft",
    "dpo",      "rlhf", "preview", "latest", "original", "unsloth", "2407",
    "2409",     "2410", "2411",    "2412",   "2501",     "2503",    "2506"};
constexpr std::string_view kQuantSuffixes[] = {
    "bnb",   "4bit",  "8bit",    "gptq",      "awq",  "fp8",  "fp4",
    "nvfp4", "mxfp4", "int4",    "int8",      "gguf", "exl2", "mlx",
    "w4a16", "w8a8",  "dynamic", "quantized", "q4",   "q8",   "nf4"};

bool in(std::string_view token, std::span<const std::string_view> list) {
  return std::find(list.begin(), list.end(), token) != list.end();
}

struct Normalized {
  std::string name;
  std::vector<std::string> dropped;
  bool quantized = false;
};

// "Qwen/Qwen2.5-7B-Instruct-AWQ" -> "qwen2.5-7b", dropped {"Instruct", "AWQ"}.
Normalized normalize(std::string_view raw) {
  Normalized n;
  std::string_view s = trim(raw);
  if (const auto slash = s.rfind('/'); slash != std::string_view::npos) s = s.substr(slash + 1);
  std::string text(s);
  std::replace(text.begin(), text.end(), '_', '-');
  if (starts_with(to_lower(text), "meta-")) text = text.substr(5);
  std::vector<std::string> tokens;
  for (const auto t : split(text, '-')) tokens.emplace_back(t);
  while (tokens.size() > 1) {
    const std::string last = to_lower(tokens.back());
    const bool quant = in(last, kQuantSuffixes);
    if (!quant && !in(last, kFinetuneSuffixes)) break;
    n.quantized = n.quantized || quant;
    n.dropped.insert(n.dropped.begin(), tokens.back());
    tokens.pop_back();
  }
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (i > 0) n.name += '-';
    n.name += to_lower(tokens[i]);
  }
  return n;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t prev = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cur = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] == b[j - 1] ? 0 : 1)});
      prev = cur;
    }
  }
  return row[b.size()];
}

}  // namespace

LenientMatch find_in_catalogue_lenient(std::string_view name) {
  LenientMatch m;
  if (const auto* e = find_in_catalogue(name)) {
    m.entry = e;
    return m;
  }
  const Normalized wanted = normalize(name);
  for (const auto& e : catalogue()) {
    std::vector<std::string> names = {e.name, e.repo};
    names.insert(names.end(), e.aliases.begin(), e.aliases.end());
    for (const auto& candidate : names) {
      if (!candidate.empty() && normalize(candidate).name == wanted.name) {
        m.entry = &e;
        m.dropped = wanted.dropped;
        m.quantized_name = wanted.quantized;
        return m;
      }
    }
  }
  return m;
}

std::vector<std::string> nearest_catalogue_names(std::string_view name, std::size_t count) {
  const std::string wanted = normalize(name).name;
  std::vector<std::pair<std::size_t, std::string>> scored;
  for (const auto& e : catalogue()) {
    scored.emplace_back(edit_distance(wanted, normalize(e.name).name), e.name);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (std::size_t i = 0; i < scored.size() && i < count; ++i) out.push_back(scored[i].second);
  return out;
}

}  // namespace sparkops::models
