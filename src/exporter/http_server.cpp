#include "exporter/http_server.hpp"

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include <httplib.h>

namespace sparkops {

namespace {

constexpr const char* kMetricsType = "text/plain; version=0.0.4; charset=utf-8";
constexpr const char* kJsonType = "application/json";
constexpr const char* kHtmlType = "text/html; charset=utf-8";
constexpr const char* kPlainType = "text/plain; charset=utf-8";

// A fixed pool of workers with a bounded queue. When the queue is full the accepting thread serves
// the connection itself, so it stops accepting until a slot frees: connections beyond
// workers + queue wait in the kernel's listen backlog instead of piling up here.
class BoundedPool final : public httplib::TaskQueue {
 public:
  BoundedPool(std::size_t workers, std::size_t max_queued) : max_queued_(max_queued) {
    for (std::size_t i = 0; i < workers; ++i) threads_.emplace_back([this] { work(); });
  }
  ~BoundedPool() override = default;

  void enqueue(std::function<void()> fn) override {
    {
      std::unique_lock lock(mutex_);
      if (jobs_.size() < max_queued_) {
        jobs_.push_back(std::move(fn));
        cond_.notify_one();
        return;
      }
    }
    fn();
  }

  void shutdown() override {
    {
      const std::lock_guard lock(mutex_);
      shutdown_ = true;
    }
    cond_.notify_all();
    for (auto& t : threads_) t.join();
  }

 private:
  void work() {
    for (;;) {
      std::function<void()> fn;
      {
        std::unique_lock lock(mutex_);
        cond_.wait(lock, [this] { return shutdown_ || !jobs_.empty(); });
        if (jobs_.empty()) return;
        fn = std::move(jobs_.front());
        jobs_.pop_front();
      }
      fn();
    }
  }

  std::size_t max_queued_;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable cond_;
  std::deque<std::function<void()>> jobs_;
  bool shutdown_ = false;
};

void serve_text(httplib::Response& res, const std::shared_ptr<const std::string>& body,
                const char* type) {
  if (!body) {
    res.status = 503;
    res.set_content("sparkops: first reading not taken yet\n", kPlainType);
    return;
  }
  res.set_content(*body, type);
}

std::optional<std::string_view> bearer_token(const httplib::Request& req) {
  const auto it = req.headers.find("Authorization");
  if (it == req.headers.end()) return std::nullopt;
  std::string_view v = it->second;
  constexpr std::string_view kBearer = "Bearer ";
  if (v.size() < kBearer.size() || v.substr(0, kBearer.size()) != kBearer) return std::nullopt;
  return v.substr(kBearer.size());
}

}  // namespace

bool token_matches(std::string_view token, std::string_view candidate) {
  unsigned char diff = token.size() == candidate.size() ? 0 : 1;
  for (std::size_t i = 0; i < token.size(); ++i) {
    const char c = i < candidate.size() ? candidate[i] : '\0';
    diff = static_cast<unsigned char>(diff | (token[i] ^ c));
  }
  return diff == 0;
}

HttpExporter::HttpExporter(const ExporterState& state, HttpOptions options,
                           std::string dashboard_html)
    : state_(state),
      options_(std::move(options)),
      dashboard_html_(std::move(dashboard_html)),
      server_(std::make_unique<httplib::Server>()) {
  install_routes();
}

HttpExporter::~HttpExporter() = default;

void HttpExporter::install_routes() {
  auto& s = *server_;
  const std::size_t workers = options_.worker_threads == 0 ? 1 : options_.worker_threads;
  const std::size_t queued = options_.max_queued_connections;
  s.new_task_queue = [workers, queued] { return new BoundedPool(workers, queued); };
  s.set_payload_max_length(options_.max_request_bytes);
  // Without TCP_NODELAY a keep-alive client's next request waits on delayed ACK (~40 ms per
  // scrape).
  s.set_tcp_nodelay(true);
  s.set_read_timeout(options_.read_timeout);
  s.set_write_timeout(options_.read_timeout);
  s.set_keep_alive_max_count(options_.keep_alive_max_requests);
  s.set_keep_alive_timeout(options_.read_timeout.count());
  s.set_default_headers({
      {"Cache-Control", "no-store"},
      {"X-Content-Type-Options", "nosniff"},
      {"Content-Security-Policy",
       "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
       "connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'"},
  });

  s.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (req.method != "GET" && req.method != "HEAD") {
      res.status = 405;
      res.set_header("Allow", "GET, HEAD");
      res.set_content("sparkops: read-only endpoint; use GET\n", kPlainType);
      return httplib::Server::HandlerResponse::Handled;
    }
    if (options_.token) {
      const auto bearer = bearer_token(req);
      const bool ok =
          (bearer && token_matches(*options_.token, *bearer)) ||
          (req.has_param("token") && token_matches(*options_.token, req.get_param_value("token")));
      if (!ok) {
        res.status = 401;
        res.set_header("WWW-Authenticate", "Bearer realm=\"sparkops\"");
        res.set_content("sparkops: token required\n", kPlainType);
        return httplib::Server::HandlerResponse::Handled;
      }
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });

  s.Get("/", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(dashboard_html_, kHtmlType);
  });
  s.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    serve_text(res, state_.metrics_text(), kMetricsType);
  });
  s.Get("/api/status", [this](const httplib::Request&, httplib::Response& res) {
    serve_text(res, state_.status_json(), kJsonType);
  });
  s.Get("/api/history", [this](const httplib::Request&, httplib::Response& res) {
    serve_text(res, state_.history_json(), kJsonType);
  });
  s.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (res.body.empty()) {
      res.set_content(
          res.status == 404 ? "sparkops: not found (try /metrics)\n" : "sparkops: error\n",
          kPlainType);
    }
  });
}

Result<int> HttpExporter::bind() {
  const auto& l = options_.listen;
  if (l.port == 0) {
    const int port = server_->bind_to_any_port(l.host);
    if (port < 0) return fail(Errc::io, "cannot listen on " + l.host + ": bind failed");
    return port;
  }
  if (!server_->bind_to_port(l.host, l.port)) {
    return fail(Errc::io, "cannot listen on " + l.host + ":" + std::to_string(l.port) +
                              " (address in use or not allowed)");
  }
  return l.port;
}

Status HttpExporter::run() {
  if (!server_->listen_after_bind()) {
    return fail(Errc::io, "HTTP server stopped with an error");
  }
  return {};
}

void HttpExporter::stop() {
  server_->stop();
}

}  // namespace sparkops
