#include "exporter/http_server.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <system_error>
#include <thread>

#include <httplib.h>

#include "base/text.hpp"
#include "exporter/http_stream.hpp"

namespace sparkops::exporter {

// cpp-httplib's request parser, router and response writer, driven over our own Stream:
// process_request is protected, so this subclass is the one way in.
class RoutedServer final : public httplib::Server {
 public:
  bool serve(httplib::Stream& strm, bool close_connection, bool& connection_closed,
             const std::function<void(httplib::Request&)>& setup) {
    return process_request(strm, close_connection, connection_closed, setup);
  }
};

namespace {

using Steady = std::chrono::steady_clock;

constexpr const char* kMetricsType = "text/plain; version=0.0.4; charset=utf-8";
constexpr const char* kJsonType = "application/json";
constexpr const char* kHtmlType = "text/html; charset=utf-8";
constexpr const char* kPlainType = "text/plain; charset=utf-8";

// What the handlers of the request being served on this thread need from its connection.
// cpp-httplib calls the pre-routing and error handlers synchronously on the thread that called
// process_request, so a thread-local pointer set by serve_connection is exact.
struct RequestState {
  ConnectionStream* stream = nullptr;
  bool has_body = false;
  bool close_after = false;
};
thread_local RequestState* t_request = nullptr;

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

bool carries_body(const httplib::Request& req) {
  if (req.has_header("Transfer-Encoding")) return true;
  if (!req.has_header("Content-Length")) return false;
  return trim(req.get_header_value("Content-Length")) != "0";
}

// A whole response for when the parser could not produce one (the head was cut off); sent
// without waiting: a client that does not read it loses it.
void send_canned(int fd, int status, const char* reason) {
  const std::string text = "HTTP/1.1 " + std::to_string(status) + " " + reason +
                           "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
  (void)::send(fd, text.data(), text.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
}

// Close without discarding the response: with unread request bytes in the receive queue, close()
// sends RST and the peer's kernel may drop the response before the client reads it. So: FIN,
// then drain (bounded in bytes and time), then close.
void lingering_close(int fd) {
  ::shutdown(fd, SHUT_WR);
  const auto until = Steady::now() + std::chrono::milliseconds{500};
  std::size_t drained = 0;
  char sink[4096];
  while (drained < 64 * 1024) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(until - Steady::now()).count();
    if (left <= 0) break;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) break;
    const ssize_t n = ::recv(fd, sink, sizeof sink, MSG_DONTWAIT);
    if (n <= 0) break;
    drained += static_cast<std::size_t>(n);
  }
  ::close(fd);
}

std::string numeric_host(const sockaddr* addr, socklen_t len, int& port) {
  char host[NI_MAXHOST] = {};
  char serv[NI_MAXSERV] = {};
  if (::getnameinfo(addr, len, host, sizeof host, serv, sizeof serv,
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
    port = -1;
    return {};
  }
  port = static_cast<int>(parse_i64(serv).value_or(-1));
  return host;
}

std::vector<std::string> machine_names() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return {};
  std::vector<std::string> names{name};
  const std::string_view full(name);
  if (const auto dot = full.find('.'); dot != std::string_view::npos) {
    names.emplace_back(full.substr(0, dot));
  }
  return names;
}

void install_routes(RoutedServer& s, const ExporterState& state, const HttpOptions& options,
                    const HostCheck& host_check, std::string dashboard_html) {
  s.set_payload_max_length(options.max_request_bytes);
  s.set_keep_alive_max_count(options.keep_alive_max_requests);
  s.set_keep_alive_timeout(options.idle_timeout.count());
  httplib::Headers headers = {
      {"Cache-Control", "no-store"},
      {"X-Content-Type-Options", "nosniff"},
      // Present, so cpp-httplib does not add "Accept-Ranges: bytes" to HEAD answers.
      {"Accept-Ranges", "none"},
      {"Content-Security-Policy",
       "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
       "connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'"},
  };
  // The web config's headers replace ours of the same name (exporter-toolkit sets them last).
  for (const auto& [name, value] : options.extra_headers) {
    headers.erase(name);
    headers.emplace(name, value);
  }
  s.set_default_headers(std::move(headers));

  s.set_pre_routing_handler([&options, &host_check](const httplib::Request& req,
                                                    httplib::Response& res) {
    const auto refuse = [&res](int status, const char* text) {
      res.status = status;
      res.set_content(text, kPlainType);
      return httplib::Server::HandlerResponse::Handled;
    };
    if (req.method != "GET" && req.method != "HEAD") {
      res.set_header("Allow", "GET, HEAD");
      return refuse(405, "sparkops: read-only endpoint; use GET\n");
    }
    if (t_request != nullptr && t_request->has_body) {
      return refuse(400, "sparkops: a GET request carries no body\n");
    }
    const bool basic = options.basic_auth && options.basic_auth->enabled();
    if (!req.has_header("Host")) {
      if (req.version != "HTTP/1.0") return refuse(400, "sparkops: HTTP/1.1 needs a Host header\n");
    } else if (!options.token && !basic && !host_check.allows(req.get_header_value("Host"))) {
      // Only an unauthenticated server needs it: a rebinding page cannot send the bearer token or
      // a password (browsers never add them by themselves for another origin), and a fleet's
      // Prometheus may use any DNS name.
      return refuse(403,
                    "sparkops: the Host header does not name this server (DNS rebinding guard); "
                    "allow the name with serve --allow-host NAME\n");
    }
    // With a token only, "/" is open (the page holds no machine data and takes #token=); with
    // basic-auth users it asks too, so the browser prompts and then sends the password itself.
    if ((options.token && req.path != "/") || basic) {
      const auto bearer = bearer_token(req);
      const bool token_ok =
          options.token && ((bearer && token_matches(*options.token, *bearer)) ||
                            (options.allow_query_token && req.has_param("token") &&
                             token_matches(*options.token, req.get_param_value("token"))));
      const bool basic_ok = basic && req.has_header("Authorization") &&
                            options.basic_auth->allows(req.get_header_value("Authorization"));
      if (!token_ok && !basic_ok) {
        if (basic) {
          res.set_header("WWW-Authenticate", "Basic");
          return refuse(401, "sparkops: authentication required\n");
        }
        res.set_header("WWW-Authenticate", "Bearer realm=\"sparkops\"");
        return refuse(401, "sparkops: token required (Authorization: Bearer <token>)\n");
      }
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });

  s.Get("/", [html = std::move(dashboard_html)](const httplib::Request&, httplib::Response& res) {
    res.set_content(html, kHtmlType);
  });
  s.Get("/metrics", [&state](const httplib::Request&, httplib::Response& res) {
    serve_text(res, state.metrics_text(), kMetricsType);
  });
  s.Get("/api/status", [&state](const httplib::Request&, httplib::Response& res) {
    serve_text(res, state.status_json(), kJsonType);
  });
  s.Get("/api/history", [&state](const httplib::Request&, httplib::Response& res) {
    serve_text(res, state.history_json(), kJsonType);
  });
  s.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (t_request != nullptr) {
      // The parser answers 400 to a head our stream cut off; say why instead.
      if (t_request->stream->limit() == ConnectionStream::Limit::too_large) res.status = 431;
      if (t_request->stream->limit() == ConnectionStream::Limit::timed_out) res.status = 408;
      if (res.status == 400 || res.status == 408 || res.status == 431 || res.status == 414 ||
          t_request->has_body) {
        t_request->close_after = true;
        res.set_header("Connection", "close");
      }
    }
    if (res.body.empty()) {
      res.set_content(res.status == 404   ? "sparkops: not found (try /metrics)\n"
                      : res.status == 431 ? "sparkops: request head too large\n"
                      : res.status == 408 ? "sparkops: request head too slow\n"
                                          : "sparkops: error\n",
                      kPlainType);
    }
  });
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
      server_(std::make_unique<RoutedServer>()),
      connections_(options_.connections),
      host_check_(
          std::make_unique<HostCheck>(options_.listen, options_.allowed_hosts, machine_names())) {
  install_routes(*server_, state_, options_, *host_check_, std::move(dashboard_html));
}

HttpExporter::~HttpExporter() {
  if (listen_fd_ >= 0) ::close(listen_fd_);
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

Result<int> HttpExporter::bind() {
  const auto& l = options_.listen;
  const std::string where = l.host + ":" + std::to_string(l.port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(l.port);
  if (const int rc = ::getaddrinfo(l.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    return fail(Errc::io, "cannot listen on " + where + ": " + ::gai_strerror(rc));
  }
  int err = 0;
  for (addrinfo* ai = found; ai != nullptr && listen_fd_ < 0; ai = ai->ai_next) {
    const int fd =
        ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      err = errno;
      continue;
    }
    const int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd, SOMAXCONN) != 0) {
      err = errno;
      ::close(fd);
      continue;
    }
    listen_fd_ = fd;
  }
  ::freeaddrinfo(found);
  if (listen_fd_ < 0) {
    return fail(Errc::io, "cannot listen on " + where + ": " + std::strerror(err) +
                              " (address in use or not allowed)");
  }
  sockaddr_storage local{};
  socklen_t len = sizeof local;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&local), &len);
  local_ip_ = numeric_host(reinterpret_cast<sockaddr*>(&local), len, local_port_);
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) return fail(Errc::io, std::string("eventfd: ") + std::strerror(errno));
  return local_port_;
}

Status HttpExporter::run() {
  if (listen_fd_ < 0) return fail(Errc::io, "HTTP server: run() before bind()");
  Status result;
  while (!stopping_.load()) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      result = fail(Errc::io, std::string("HTTP server: poll: ") + std::strerror(errno));
      break;
    }
    if (stopping_.load()) break;
    if ((fds[0].revents & POLLIN) == 0) continue;
    sockaddr_storage peer{};
    socklen_t len = sizeof peer;
    const int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&peer), &len,
                             SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        // Out of descriptors: back off briefly instead of spinning on the pending connection.
        std::this_thread::sleep_for(std::chrono::milliseconds{10});
      }
      continue;  // EAGAIN, ECONNABORTED, EINTR...: the next poll tells
    }
    const int yes = 1;  // without it a keep-alive client's next request waits on delayed ACK
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
    int peer_port = -1;
    std::string peer_ip = numeric_host(reinterpret_cast<sockaddr*>(&peer), len, peer_port);
    const auto admission = connections_.admit(peer_ip, fd, Steady::now());
    if (admission.verdict != ConnectionTable::Verdict::admitted) {
      send_canned(fd, 503, "Service Unavailable");
      ::close(fd);
      continue;
    }
    try {
      const std::uint64_t id = admission.id;
      std::thread worker([this, fd, id, ip = std::move(peer_ip), peer_port]() mutable {
        serve_connection(fd, id, std::move(ip), peer_port);
      });
      worker.detach();
    } catch (const std::system_error&) {
      connections_.release(admission.id);
      send_canned(fd, 503, "Service Unavailable");
      ::close(fd);
    }
  }
  ::close(listen_fd_);  // refuse, rather than queue, connections from here on
  listen_fd_ = -1;
  connections_.shutdown_all_and_wait();
  return result;
}

void HttpExporter::serve_connection(int fd, std::uint64_t id, std::string peer, int peer_port) {
  ConnectionStream strm(fd, std::move(peer), peer_port, local_ip_, local_port_);
  if (options_.tls) {
    // SSL_write writes with write(2), not send(MSG_NOSIGNAL): a peer that has gone would raise
    // SIGPIPE. Blocked in this connection's thread only, the write fails with EPIPE instead.
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
    if (!strm.start_tls(options_.tls.get(), Steady::now() + options_.header_timeout) ||
        !client_san_allowed(strm.tls(), options_.client_allowed_sans)) {
      strm.end_tls();
      connections_.release(id);
      lingering_close(fd);
      return;
    }
  }
  // A canned answer goes through TLS when the connection has it (plain bytes would be noise).
  const auto canned = [&strm, fd](int status, const char* reason) {
    if (strm.tls() == nullptr) return send_canned(fd, status, reason);
    const std::string text = "HTTP/1.1 " + std::to_string(status) + " " + reason +
                             "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    strm.begin_response(Steady::now() + std::chrono::seconds{1});
    (void)strm.write(text.data(), text.size());
  };
  RequestState state;
  state.stream = &strm;
  t_request = &state;
  const auto setup = [this, &strm, &state, id](httplib::Request& req) {
    connections_.set_phase(id, ConnectionTable::Phase::responding, Steady::now());
    strm.begin_response(Steady::now() + options_.write_timeout);
    // No ranges: a multi-range request asks for many copies of the body (a 161 MB answer to
    // 8 KB of "Range: bytes=0-,0-,..."); the whole body with 200 is always a valid answer.
    req.ranges.clear();
    req.headers.erase("Range");
    state.has_body = carries_body(req);
    if (state.has_body) {
      // The body is never read, so nothing after it can be parsed: answer, then close.
      state.close_after = true;
      req.headers.erase("Connection");
      req.headers.emplace("Connection", "close");
    }
  };
  auto deadline = Steady::now() + options_.header_timeout;
  for (std::size_t served = 0; served < options_.keep_alive_max_requests; ++served) {
    if (!strm.wait_for_request(deadline)) break;
    state.has_body = false;
    state.close_after = false;
    strm.begin_head(options_.max_request_bytes, Steady::now() + options_.header_timeout);
    const bool last = served + 1 == options_.keep_alive_max_requests || stopping_.load();
    bool closed = false;
    const bool ok = server_->serve(strm, last, closed, setup);
    if (strm.limit() != ConnectionStream::Limit::none && strm.written() == 0) {
      if (strm.limit() == ConnectionStream::Limit::too_large) {
        canned(431, "Request Header Fields Too Large");
      } else {
        canned(408, "Request Timeout");
      }
      break;
    }
    if (!ok || closed || state.close_after || strm.limit() != ConnectionStream::Limit::none) break;
    connections_.set_phase(id, ConnectionTable::Phase::awaiting_request, Steady::now());
    deadline = Steady::now() + options_.idle_timeout;
  }
  t_request = nullptr;
  strm.end_tls();
  connections_.release(id);
  lingering_close(fd);
}

void HttpExporter::stop() {
  stopping_.store(true);
  if (wake_fd_ >= 0) {
    const std::uint64_t one = 1;
    (void)!::write(wake_fd_, &one, sizeof one);
  }
}

}  // namespace sparkops::exporter
