#include "models/catalogue.hpp"

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

}  // namespace sparkops::models
