#pragma once
// `serve --web.config.file FILE`: the web configuration format of Prometheus' exporter-toolkit
// (docs/web-configuration.md and web/tls_config.go at tag v0.17.1), so the TLS and basic-auth
// settings a team uses for node_exporter work for sparkops too.
//
// Parsed as exporter-toolkit does: strict (an unknown key is an error, as yaml.UnmarshalStrict),
// file paths relative to the config file's directory, TLS 1.2-1.3 by default, client_auth_type
// names of Go's crypto/tls (RequireClientCert kept as the old alias of RequireAnyClientCert), a CA
// without a client-auth policy refused, only the five security headers with their allowed values,
// basic-auth passwords as bcrypt hashes (checked at load).
//
// Differences (docs/metrics.md "Transport"): the file is read once at start, not on every request;
// `cipher_suites` (Go's suite names) and `rate_limit` are refused with a message rather than
// ignored, so a config never silently means less than it says; `http2` is accepted and has no
// effect (HTTP/1.1 only).

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.hpp"

namespace sparkops::exporter {

enum class ClientAuth {
  none,                // NoClientCert
  request,             // RequestClientCert: asked for, not required, not verified
  require_any,         // RequireAnyClientCert: required, not verified
  verify_if_given,     // VerifyClientCertIfGiven
  require_and_verify,  // RequireAndVerifyClientCert
};
std::string_view client_auth_name(ClientAuth auth);  // the exporter-toolkit spelling

enum class TlsVersion { tls10, tls11, tls12, tls13 };

struct TlsServerConfig {
  // PEM text, loaded from cert_file/key_file/client_ca_file or given inline (cert/key/client_ca).
  std::string cert_pem;
  std::string key_pem;
  std::optional<std::string> client_ca_pem;
  std::string cert_source;  // the file or "inline cert", for messages
  ClientAuth client_auth = ClientAuth::none;
  TlsVersion min_version = TlsVersion::tls12;
  TlsVersion max_version = TlsVersion::tls13;
  bool prefer_server_cipher_suites = true;
  std::vector<std::string> curve_groups;         // OpenSSL group names, in preference order
  std::vector<std::string> client_allowed_sans;  // empty: no SAN check
};

struct WebConfig {
  std::optional<TlsServerConfig> tls;
  std::map<std::string, std::string, std::less<>> basic_auth_users;  // user -> bcrypt hash
  std::vector<std::pair<std::string, std::string>> headers;          // added to every response
};

// `text` is the file's content; `dir` resolves relative paths. Errors name the key and the problem.
Result<WebConfig> parse_web_config(std::string_view text, const std::filesystem::path& dir);

// Reads `file` (at most 1 MiB; PEM files at most 1 MiB each) and parses it.
Result<WebConfig> read_web_config(const std::filesystem::path& file);

}  // namespace sparkops::exporter
