#pragma once
// `serve`'s HTTP front as a module loaded at run time (sparkops-http.so, installed beside the
// binary at <bindir>/../lib/sparkops/). The front is cpp-httplib, which Debian builds against
// OpenSSL, plus OpenSSL itself (TLS), yaml-cpp (the web config) and libxcrypt (bcrypt); linked
// into the binary, every command mapped and relocated all of them at start-up (libcrypto alone
// is ~3 MiB of RSS) though only `serve` over HTTP uses them. Loading them with the module keeps
// the other commands' start-up and memory to what they use.
//
// The module is built from this tree by the same compiler, so the table below passes C++ types
// as they are; `abi` guards against a module left over from another build. The module is never
// unloaded (objects it made may outlive any scope that could dlclose it).

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/result.hpp"
#include "exporter/http_server.hpp"

namespace sparkops::exporter {

// What --web.config.file asks for, read, checked and ready to serve.
struct WebSetup {
  std::shared_ptr<SSL_CTX> tls;  // TLS on every connection when set
  std::vector<std::string> client_allowed_sans;
  std::shared_ptr<BasicAuth> basic_auth;  // when the config has basic_auth_users
  std::vector<std::pair<std::string, std::string>> headers;
  bool client_cert_verified = false;  // RequireAndVerifyClientCert: TLS itself authenticates
};

// Bumped whenever this table, HttpOptions, WebSetup or the HttpFront interface changes.
inline constexpr int kHttpModuleAbi = 1;

struct HttpModule {
  int abi = kHttpModuleAbi;
  // Reads and checks a web config file (docs/web-config.md): a bad certificate or key is an
  // error here, not a server that fails every handshake.
  Result<WebSetup> (*read_web_setup)(const std::string& file) = nullptr;
  // An HttpExporter over `state`, which must outlive it.
  std::unique_ptr<HttpFront> (*make_front)(const ExporterState& state, HttpOptions options,
                                           std::string dashboard_html) = nullptr;
};

// The module's one exported symbol: extern "C" const HttpModule* sparkops_http_module();
inline constexpr const char* kHttpModuleEntry = "sparkops_http_module";

// Loads the module once per process from beside the running binary (/proc/self/exe) and returns
// its table; later calls return the same table. Errors name the file and what failed.
Result<const HttpModule*> load_http_module();

}  // namespace sparkops::exporter
