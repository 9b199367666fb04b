#pragma once
// The exporter's HTTP front: read-only routes over an ExporterState.
//   GET /            the live dashboard page (uPlot inlined; no machine data, so no token)
//   GET /metrics     Prometheus text exposition
//   GET /api/status  the `status --json` document
//   GET /api/history the dashboard ring buffer (columnar JSON)
// HEAD works wherever GET does; every other method is 405 (no endpoint changes the machine).
//
// cpp-httplib parses requests, routes and writes responses; the connection layer is ours
// (docs/reliability.md, "The exporter under hostile clients"): one accept thread that never
// waits on a client, one thread per admitted connection (ConnectionTable bounds them per peer and
// in total, evicting the slowest waiting client when full), a ConnectionStream that bounds each
// request head in bytes and in total time, answers pipelined and half-closed requests, and
// refuses request bodies. Ranges are ignored (always 200 with the whole body); without a token the
// Host header must name this server (HostCheck, against DNS rebinding); the token is accepted only
// from `Authorization: Bearer` unless `allow_query_token`.
// With a web config (docs/web-config.md): TLS on every connection (handshake within the head
// timeout, client certificate policy and SANs as configured), basic-auth users accepted beside the
// token (either one admits a request, and then "/" needs it too so a browser asks for the
// password), and the configured security headers on every response.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "exporter/basic_auth.hpp"
#include "exporter/exporter_state.hpp"
#include "exporter/http_guard.hpp"
#include "exporter/listen_address.hpp"
#include "exporter/tls_context.hpp"

namespace sparkops::exporter {

class RoutedServer;

struct HttpOptions {
  ListenAddress listen;
  std::optional<std::string> token;        // required on every data route when set
  bool allow_query_token = false;          // also accept ?token= (it ends up in logs and history)
  std::vector<std::string> allowed_hosts;  // extra Host names when serving without a token
  std::shared_ptr<SSL_CTX> tls;            // serve HTTPS with this context when set
  std::vector<std::string> client_allowed_sans;  // with tls: the client cert must carry one
  std::shared_ptr<BasicAuth> basic_auth;         // basic-auth users, when any
  std::vector<std::pair<std::string, std::string>> extra_headers;  // web config headers
  ConnectionLimits connections;
  // Request line + headers. The longest request Prometheus or a browser sends is well under 2 KiB;
  // a GET has no body, and a request with one is refused.
  std::size_t max_request_bytes = 8 * 1024;
  // The whole head of one request must arrive within this (not per read): Prometheus's default
  // scrape_timeout is 10 s, so a head slower than that is of no use to a scraper.
  std::chrono::seconds header_timeout{10};
  std::chrono::seconds idle_timeout{5};    // keep-alive wait for the next request
  std::chrono::seconds write_timeout{10};  // the whole response must be taken within this
  std::size_t keep_alive_max_requests = 100;
};

// True when `candidate` equals `token`, compared in time independent of where they differ.
bool token_matches(std::string_view token, std::string_view candidate);

// The server as `serve` drives it; HttpExporter is the one implementation. An interface so the
// binary calls it through the HTTP module (exporter/http_module.hpp) without linking its code.
class HttpFront {
 public:
  virtual ~HttpFront() = default;
  // Binds the listening socket; with port 0 the kernel picks one. Returns the bound port.
  virtual Result<int> bind() = 0;
  // Serves until stop(); call after bind(). Returns once every connection is closed.
  virtual Status run() = 0;
  // Thread-safe; run() returns soon after.
  virtual void stop() = 0;
};

class HttpExporter final : public HttpFront {
 public:
  // `state` must outlive the server. `dashboard_html` is the whole page, served as is.
  HttpExporter(const ExporterState& state, HttpOptions options, std::string dashboard_html);
  ~HttpExporter() override;
  HttpExporter(const HttpExporter&) = delete;
  HttpExporter& operator=(const HttpExporter&) = delete;

  Result<int> bind() override;
  Status run() override;
  void stop() override;

 private:
  void serve_connection(int fd, std::uint64_t id, std::string peer, int peer_port);

  const ExporterState& state_;
  HttpOptions options_;
  std::unique_ptr<RoutedServer> server_;
  ConnectionTable connections_;
  std::unique_ptr<HostCheck> host_check_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;  // eventfd: stop() wakes the accept loop
  std::atomic<bool> stopping_{false};
  std::string local_ip_;
  int local_port_ = 0;
};

}  // namespace sparkops::exporter
