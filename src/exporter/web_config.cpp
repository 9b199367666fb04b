#include "exporter/web_config.hpp"

#include <array>
#include <set>

#include <yaml-cpp/yaml.h>

#include "base/file_io.hpp"
#include "exporter/basic_auth.hpp"

namespace sparkops::exporter {

namespace {

constexpr std::size_t kMaxConfigBytes = 1 << 20;
constexpr std::size_t kMaxPemBytes = 1 << 20;

Error bad(std::string detail) {
  return Error{Errc::malformed, "web config: " + std::move(detail)};
}

// yaml-cpp throws on type mismatches; every read goes through these, which turn a wrong shape into
// an Error naming the key.
Result<std::string> scalar(const YAML::Node& node, std::string_view key) {
  if (!node.IsScalar()) return tl::unexpected(bad(std::string(key) + ": expected a string"));
  return node.Scalar();
}

Result<bool> boolean(const YAML::Node& node, std::string_view key) {
  bool value = false;
  if (!node.IsScalar() || !YAML::convert<bool>::decode(node, value)) {
    return tl::unexpected(bad(std::string(key) + ": expected true or false"));
  }
  return value;
}

Result<std::vector<std::string>> strings(const YAML::Node& node, std::string_view key) {
  if (node.IsNull()) return std::vector<std::string>{};
  if (!node.IsSequence()) return tl::unexpected(bad(std::string(key) + ": expected a list"));
  std::vector<std::string> out;
  for (const auto& item : node) {
    auto s = scalar(item, key);
    if (!s) return tl::unexpected(s.error());
    out.push_back(std::move(*s));
  }
  return out;
}

// Strict like yaml.UnmarshalStrict: every key of `node` must be in `known`.
Status only_keys(const YAML::Node& node, std::string_view where,
                 std::initializer_list<std::string_view> known) {
  if (node.IsNull()) return {};
  if (!node.IsMap())
    return fail(Errc::malformed, "web config: " + std::string(where) + ": expected a mapping");
  for (const auto& kv : node) {
    if (!kv.first.IsScalar())
      return fail(Errc::malformed, "web config: " + std::string(where) + ": non-string key");
    const std::string& k = kv.first.Scalar();
    bool ok = false;
    for (const auto& name : known) ok = ok || name == k;
    if (!ok) {
      return fail(Errc::malformed,
                  "web config: " + (where.empty() ? std::string() : std::string(where) + ".") + k +
                      ": unknown key");
    }
  }
  return {};
}

std::filesystem::path join_dir(const std::filesystem::path& dir, const std::string& path) {
  const std::filesystem::path p(path);
  return p.is_absolute() ? p : dir / p;
}

Result<std::string> read_pem(const std::filesystem::path& file, std::string_view key) {
  auto text = read_file(file, kMaxPemBytes);
  if (!text) return tl::unexpected(bad(std::string(key) + ": " + text.error().detail));
  return *text;
}

Result<TlsVersion> tls_version(const YAML::Node& node, std::string_view key) {
  auto s = scalar(node, key);
  if (!s) return tl::unexpected(s.error());
  static const std::array<std::pair<std::string_view, TlsVersion>, 4> names = {{
      {"TLS10", TlsVersion::tls10},
      {"TLS11", TlsVersion::tls11},
      {"TLS12", TlsVersion::tls12},
      {"TLS13", TlsVersion::tls13},
  }};
  for (const auto& [name, v] : names) {
    if (*s == name) return v;
  }
  return tl::unexpected(bad(std::string(key) + ": unknown TLS version " + *s + " (TLS10-TLS13)"));
}

Result<ClientAuth> client_auth(const std::string& s) {
  if (s.empty() || s == "NoClientCert") return ClientAuth::none;
  if (s == "RequestClientCert") return ClientAuth::request;
  if (s == "RequireAnyClientCert" || s == "RequireClientCert") return ClientAuth::require_any;
  if (s == "VerifyClientCertIfGiven") return ClientAuth::verify_if_given;
  if (s == "RequireAndVerifyClientCert") return ClientAuth::require_and_verify;
  return tl::unexpected(bad("tls_server_config.client_auth_type: invalid " + s));
}

// Go's crypto/tls curve names -> OpenSSL group names.
Result<std::string> curve_group(const std::string& go_name) {
  if (go_name == "CurveP256") return std::string("P-256");
  if (go_name == "CurveP384") return std::string("P-384");
  if (go_name == "CurveP521") return std::string("P-521");
  if (go_name == "X25519") return std::string("X25519");
  return tl::unexpected(bad("tls_server_config.curve_preferences: unknown curve " + go_name));
}

Result<std::optional<TlsServerConfig>> parse_tls(const YAML::Node& node,
                                                 const std::filesystem::path& dir) {
  if (!node || node.IsNull()) return std::optional<TlsServerConfig>{};
  if (auto ok = only_keys(node, "tls_server_config",
                          {"cert", "key", "client_ca", "cert_file", "key_file", "client_auth_type",
                           "client_ca_file", "cipher_suites", "curve_preferences", "min_version",
                           "max_version", "prefer_server_cipher_suites", "client_allowed_sans"});
      !ok) {
    return tl::unexpected(ok.error());
  }
  std::map<std::string, std::string> s;
  for (const char* key : {"cert", "key", "client_ca", "cert_file", "key_file", "client_auth_type",
                          "client_ca_file"}) {
    if (!node[key] || node[key].IsNull()) continue;
    auto v = scalar(node[key], std::string("tls_server_config.") + key);
    if (!v) return tl::unexpected(v.error());
    if (!v->empty()) s[key] = *v;
  }
  if (s.empty()) return std::optional<TlsServerConfig>{};  // exporter-toolkit: no TLS config
  if (node["cipher_suites"] && !node["cipher_suites"].IsNull() &&
      node["cipher_suites"].size() > 0) {
    return tl::unexpected(
        bad("tls_server_config.cipher_suites: not supported (Go suite names; OpenSSL's defaults "
            "are used: leave it out, or set min_version: TLS13)"));
  }
  const auto both = [&s](const char* a, const char* b) { return s.count(a) && s.count(b); };
  if (both("cert", "cert_file"))
    return tl::unexpected(bad("tls_server_config: give cert or cert_file, not both"));
  if (both("key", "key_file"))
    return tl::unexpected(bad("tls_server_config: give key or key_file, not both"));
  if (both("client_ca", "client_ca_file"))
    return tl::unexpected(bad("tls_server_config: give client_ca or client_ca_file, not both"));
  if (!s.count("cert") && !s.count("cert_file"))
    return tl::unexpected(bad("tls_server_config: missing one of cert or cert_file"));
  if (!s.count("key") && !s.count("key_file"))
    return tl::unexpected(bad("tls_server_config: missing one of key or key_file"));

  TlsServerConfig t;
  if (s.count("cert_file")) {
    const auto file = join_dir(dir, s["cert_file"]);
    auto pem = read_pem(file, "tls_server_config.cert_file");
    if (!pem) return tl::unexpected(pem.error());
    t.cert_pem = std::move(*pem);
    t.cert_source = file.string();
  } else {
    t.cert_pem = s["cert"];
    t.cert_source = "tls_server_config.cert";
  }
  if (s.count("key_file")) {
    auto pem = read_pem(join_dir(dir, s["key_file"]), "tls_server_config.key_file");
    if (!pem) return tl::unexpected(pem.error());
    t.key_pem = std::move(*pem);
  } else {
    t.key_pem = s["key"];
  }
  if (s.count("client_ca_file")) {
    auto pem = read_pem(join_dir(dir, s["client_ca_file"]), "tls_server_config.client_ca_file");
    if (!pem) return tl::unexpected(pem.error());
    t.client_ca_pem = std::move(*pem);
  } else if (s.count("client_ca")) {
    t.client_ca_pem = s["client_ca"];
  }
  auto auth = client_auth(s.count("client_auth_type") ? s["client_auth_type"] : std::string());
  if (!auth) return tl::unexpected(auth.error());
  t.client_auth = *auth;
  if (t.client_ca_pem && t.client_auth == ClientAuth::none) {
    return tl::unexpected(
        bad("tls_server_config: client CA configured without a client_auth_type "
            "(RequireAndVerifyClientCert verifies clients)"));
  }
  if ((t.client_auth == ClientAuth::verify_if_given ||
       t.client_auth == ClientAuth::require_and_verify) &&
      !t.client_ca_pem) {
    return tl::unexpected(bad("tls_server_config: client_auth_type " +
                              std::string(client_auth_name(t.client_auth)) +
                              " needs client_ca_file or client_ca"));
  }
  if (node["min_version"] && !node["min_version"].IsNull()) {
    auto v = tls_version(node["min_version"], "tls_server_config.min_version");
    if (!v) return tl::unexpected(v.error());
    t.min_version = *v;
  }
  if (node["max_version"] && !node["max_version"].IsNull()) {
    auto v = tls_version(node["max_version"], "tls_server_config.max_version");
    if (!v) return tl::unexpected(v.error());
    t.max_version = *v;
  }
  if (t.min_version > t.max_version) {
    return tl::unexpected(bad("tls_server_config: min_version is above max_version"));
  }
  if (node["prefer_server_cipher_suites"] && !node["prefer_server_cipher_suites"].IsNull()) {
    auto b = boolean(node["prefer_server_cipher_suites"],
                     "tls_server_config.prefer_server_cipher_suites");
    if (!b) return tl::unexpected(b.error());
    t.prefer_server_cipher_suites = *b;
  }
  if (node["curve_preferences"]) {
    auto curves = strings(node["curve_preferences"], "tls_server_config.curve_preferences");
    if (!curves) return tl::unexpected(curves.error());
    for (const auto& c : *curves) {
      auto g = curve_group(c);
      if (!g) return tl::unexpected(g.error());
      t.curve_groups.push_back(std::move(*g));
    }
  }
  if (node["client_allowed_sans"]) {
    auto sans = strings(node["client_allowed_sans"], "tls_server_config.client_allowed_sans");
    if (!sans) return tl::unexpected(sans.error());
    t.client_allowed_sans = std::move(*sans);
    if (!t.client_allowed_sans.empty() && t.client_auth != ClientAuth::require_any &&
        t.client_auth != ClientAuth::require_and_verify) {
      return tl::unexpected(
          bad("tls_server_config.client_allowed_sans needs client_auth_type RequireAnyClientCert "
              "or RequireAndVerifyClientCert (otherwise a client may send no certificate)"));
    }
  }
  return std::optional<TlsServerConfig>(std::move(t));
}

// exporter-toolkit's extraHTTPHeaders: the headers that may be set, and their allowed values.
Status parse_headers(const YAML::Node& node, WebConfig& out) {
  if (!node || node.IsNull()) return {};
  if (!node.IsMap())
    return fail(Errc::malformed, "web config: http_server_config.headers: expected a mapping");
  for (const auto& kv : node) {
    auto name = scalar(kv.first, "http_server_config.headers");
    if (!name) return tl::unexpected(name.error());
    auto value = scalar(kv.second, "http_server_config.headers." + *name);
    if (!value) return tl::unexpected(value.error());
    static const std::map<std::string, std::set<std::string>, std::less<>> allowed = {
        {"Strict-Transport-Security", {}},
        {"X-Content-Type-Options", {"nosniff"}},
        {"X-Frame-Options", {"deny", "sameorigin"}},
        {"X-XSS-Protection", {}},
        {"Content-Security-Policy", {}},
    };
    const auto it = allowed.find(*name);
    if (it == allowed.end()) {
      return fail(Errc::malformed, "web config: HTTP header " + *name + " can not be configured");
    }
    if (!it->second.empty() && !it->second.count(*value)) {
      return fail(Errc::malformed, "web config: invalid value for " + *name + ": " + *value);
    }
    if (value->find_first_of("\r\n") != std::string::npos) {
      return fail(Errc::malformed, "web config: header " + *name + " holds a line break");
    }
    if (!value->empty()) out.headers.emplace_back(*name, *value);
  }
  return {};
}

}  // namespace

std::string_view client_auth_name(ClientAuth auth) {
  switch (auth) {
    case ClientAuth::none:
      return "NoClientCert";
    case ClientAuth::request:
      return "RequestClientCert";
    case ClientAuth::require_any:
      return "RequireAnyClientCert";
    case ClientAuth::verify_if_given:
      return "VerifyClientCertIfGiven";
    case ClientAuth::require_and_verify:
      return "RequireAndVerifyClientCert";
  }
  return "NoClientCert";
}

Result<WebConfig> parse_web_config(std::string_view text, const std::filesystem::path& dir) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return tl::unexpected(bad("not YAML: " + std::string(e.what())));
  }
  WebConfig out;
  try {
    if (root.IsNull()) return out;  // an empty file: plain HTTP, no users (exporter-toolkit too)
    if (auto ok = only_keys(
            root, "",
            {"tls_server_config", "http_server_config", "rate_limit", "basic_auth_users"});
        !ok) {
      return tl::unexpected(ok.error());
    }
    if (const auto rl = root["rate_limit"]; rl && !rl.IsNull()) {
      return tl::unexpected(
          bad("rate_limit: not supported (the exporter bounds connections "
              "per peer itself; leave it out)"));
    }
    auto tls = parse_tls(root["tls_server_config"], dir);
    if (!tls) return tl::unexpected(tls.error());
    out.tls = std::move(*tls);

    if (const auto http = root["http_server_config"]; http && !http.IsNull()) {
      if (auto ok = only_keys(http, "http_server_config", {"http2", "headers"}); !ok)
        return tl::unexpected(ok.error());
      if (http["http2"] && !http["http2"].IsNull()) {
        if (auto b = boolean(http["http2"], "http_server_config.http2"); !b)
          return tl::unexpected(b.error());
      }
      if (auto ok = parse_headers(http["headers"], out); !ok) return tl::unexpected(ok.error());
    }

    if (const auto users = root["basic_auth_users"]; users && !users.IsNull()) {
      if (!users.IsMap()) return tl::unexpected(bad("basic_auth_users: expected a mapping"));
      for (const auto& kv : users) {
        auto user = scalar(kv.first, "basic_auth_users");
        if (!user) return tl::unexpected(user.error());
        auto hash = scalar(kv.second, "basic_auth_users." + *user);
        if (!hash) return tl::unexpected(hash.error());
        if (!is_bcrypt_hash(*hash)) {
          return tl::unexpected(bad("basic_auth_users." + *user +
                                    ": not a bcrypt hash ($2a$/$2b$/$2y$, cost 04-31; "
                                    "htpasswd -nBC 10 \"\" | tr -d ':\\n')"));
        }
        out.basic_auth_users[*user] = *hash;
      }
    }
  } catch (const YAML::Exception& e) {
    return tl::unexpected(bad(e.what()));
  }
  return out;
}

Result<WebConfig> read_web_config(const std::filesystem::path& file) {
  auto text = read_file(file, kMaxConfigBytes);
  if (!text)
    return tl::unexpected(Error{text.error().code, "--web.config.file: " + text.error().detail});
  auto config = parse_web_config(*text, file.parent_path());
  if (!config) {
    return tl::unexpected(Error{config.error().code, file.string() + ": " + config.error().detail});
  }
  return config;
}

}  // namespace sparkops::exporter
