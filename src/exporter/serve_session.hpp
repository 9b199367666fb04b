#pragma once
// The `serve` session: the request checked into a plan (listen address, interval, token, web
// config, textfile), then one loop that reads the machine every interval on the calling thread
// while the HTTP server (its own thread) serves only what the last reading rendered.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include <openssl/ssl.h>

#include "base/console.hpp"
#include "base/output_file.hpp"
#include "base/result.hpp"
#include "config/run_sections.hpp"
#include "exporter/basic_auth.hpp"
#include "exporter/listen_address.hpp"
#include "exporter/metrics_builder.hpp"
#include "gpu/gpu_source.hpp"
#include "host/host_root.hpp"
#include "sampling/throttle_detector.hpp"
#include "status/status_report.hpp"

namespace sparkops::exporter {

// The request as given on the command line (text, checked by plan_serve); empty strings take the
// defaults' value.
struct ServeRequest {
  std::string listen;
  std::string interval;
  std::string history = "1h";
  std::string token_file;
  bool insecure = false;
  bool allow_query_token = false;
  std::vector<std::string> allow_hosts;
  std::string textfile_dir;
  bool once = false;
  std::string max_workloads;
  bool dcgm_compat = false;
  std::string web_config;
};

struct ServePlan {
  ListenAddress listen;
  std::chrono::nanoseconds interval{};
  std::chrono::nanoseconds history{};
  std::optional<std::string> token;
  std::optional<std::filesystem::path> textfile;
  std::size_t max_workloads = kDefaultMaxWorkloadSeries;
  std::shared_ptr<SSL_CTX> tls;  // --web.config.file's TLS, ready to serve
  std::vector<std::string> client_allowed_sans;
  std::shared_ptr<BasicAuth> basic_auth;
  std::vector<std::pair<std::string, std::string>> headers;
  bool client_cert_verified = false;  // RequireAndVerifyClientCert: TLS itself authenticates
};

// What an empty flag means: config serve.listen, serve.interval and serve.max_workloads (cli/
// turns the config into these).
// Their defaults are written once, in config/run_sections.hpp.
using ServeDefaults = config::ServeSettings;

// Checks the request before anything starts: a bad address, interval, token file, certificate or
// key is one error naming the flag, and a non-loopback listen needs some authentication (or
// --insecure). Errors are Errc::invalid_argument.
Result<ServePlan> plan_serve(const ServeRequest& request, const ServeDefaults& defaults);

// What one reading needs from the machine.
struct ServeSource {
  host::HostRoot root;
  gpu::GpuSource* gpu = nullptr;
  status::StatusOptions status;
  sampling::DetectorConfig detector;
  OutputTrust output_trust = OutputTrust::checked;
};

// Reads and publishes once, then (unless --once) serves until `stop` is requested or the HTTP
// server fails. Announces where it listens (or writes) on io.out. A reading that throws costs
// that tick only. Returns the exit code: kExitFailure when the server could not bind or run, or
// when --once could not write the textfile; else kExitOk.
int run_serve_session(const Console& io, const ServeRequest& request, const ServePlan& plan,
                      const ServeSource& source, std::stop_token stop);

}  // namespace sparkops::exporter
