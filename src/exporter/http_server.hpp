#pragma once
// The exporter's HTTP front: read-only routes over an ExporterState, on cpp-httplib.
//   GET /            the live dashboard page (uPlot inlined; polls /api/history)
//   GET /metrics     Prometheus text exposition
//   GET /api/status  the `status --json` document
//   GET /api/history the dashboard ring buffer (columnar JSON)
// HEAD works wherever GET does; every other method is 405 (no endpoint changes the machine).
// With a token, every request must carry `Authorization: Bearer <token>` or `?token=<token>`
// (401 otherwise). Request size, worker threads, queued connections and read time are bounded.

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "exporter/exporter_state.hpp"
#include "exporter/listen_address.hpp"

namespace httplib {
class Server;
}

namespace sparkops {

struct HttpOptions {
  ListenAddress listen;
  std::optional<std::string> token;          // required on every request when set
  std::size_t worker_threads = 8;            // concurrent connections being served
  std::size_t max_queued_connections = 32;   // accepted and waiting; beyond it accept() waits
  std::size_t max_request_bytes = 8 * 1024;  // request body bound (GET has none)
  std::chrono::seconds read_timeout{5};
  std::size_t keep_alive_max_requests = 100;
};

// True when `candidate` equals `token`, compared in time independent of where they differ.
bool token_matches(std::string_view token, std::string_view candidate);

class HttpExporter {
 public:
  // `state` must outlive the server. `dashboard_html` is the whole page, served as is.
  HttpExporter(const ExporterState& state, HttpOptions options, std::string dashboard_html);
  ~HttpExporter();
  HttpExporter(const HttpExporter&) = delete;
  HttpExporter& operator=(const HttpExporter&) = delete;

  // Binds the listening socket; with port 0 the kernel picks one. Returns the bound port.
  Result<int> bind();
  // Serves until stop(); call after bind().
  Status run();
  // Thread-safe; run() returns soon after.
  void stop();

 private:
  void install_routes();

  const ExporterState& state_;
  HttpOptions options_;
  std::string dashboard_html_;
  std::unique_ptr<httplib::Server> server_;
};

}  // namespace sparkops
