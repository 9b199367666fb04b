// The entry point of sparkops-http.so (exporter/http_module.hpp): the web config reader and the
// HTTP server, with cpp-httplib, OpenSSL, yaml-cpp and libxcrypt linked here and nowhere else.

#include <memory>
#include <string>

#include "exporter/http_module.hpp"
#include "exporter/tls_context.hpp"
#include "exporter/web_config.hpp"

namespace sparkops::exporter {

namespace {

Result<WebSetup> read_web_setup(const std::string& file) {
  auto config = read_web_config(file);
  if (!config) return tl::unexpected(config.error());
  WebSetup setup;
  if (config->tls) {
    auto ctx = make_tls_context(*config->tls);
    if (!ctx) return fail(Errc::invalid_argument, file + ": " + ctx.error().detail);
    setup.tls = std::shared_ptr<SSL_CTX>(ctx->release(), SSL_CTX_free);
    setup.client_allowed_sans = config->tls->client_allowed_sans;
    setup.client_cert_verified = config->tls->client_auth == ClientAuth::require_and_verify;
  }
  if (!config->basic_auth_users.empty()) {
    setup.basic_auth = std::make_shared<BasicAuth>(std::move(config->basic_auth_users));
  }
  setup.headers = std::move(config->headers);
  return setup;
}

std::unique_ptr<HttpFront> make_front(const ExporterState& state, HttpOptions options,
                                      std::string dashboard_html) {
  return std::make_unique<HttpExporter>(state, std::move(options), std::move(dashboard_html));
}

}  // namespace

}  // namespace sparkops::exporter

extern "C" __attribute__((visibility("default"))) const sparkops::exporter::HttpModule*
sparkops_http_module() {
  static const sparkops::exporter::HttpModule module{sparkops::exporter::kHttpModuleAbi,
                                                     &sparkops::exporter::read_web_setup,
                                                     &sparkops::exporter::make_front};
  return &module;
}
