// `sparkops serve` under hostile clients on loopback (docs/reliability.md, "The exporter under
// hostile clients"): ranges, bodies, oversized and slow heads, Host headers, query tokens,
// pipelined and half-closed requests. Raw sockets, bounded counts; every wait has a generous
// bound that only keeps a broken server from hanging the suite (no timing is asserted).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "serve_harness.hpp"

namespace sparkops {
namespace {

class Socket {
 public:
  explicit Socket(int port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    timeval tv{20, 0};  // a fail-safe only: a correct server answers at once
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  }
  ~Socket() { ::close(fd_); }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  bool connected() const { return connected_; }
  // False when the server closed before taking everything (a refused body, say).
  bool send(const std::string& s) {
    std::size_t off = 0;
    while (off < s.size()) {
      const ssize_t n = ::send(fd_, s.data() + off, s.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return false;
      off += static_cast<std::size_t>(n);
    }
    return true;
  }
  void half_close() { ::shutdown(fd_, SHUT_WR); }
  // Everything until the server closes (or the fail-safe timeout).
  std::string read_all() {
    std::string out;
    char buf[65536];
    for (;;) {
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) break;
      out.append(buf, static_cast<std::size_t>(n));
    }
    return out;
  }

 private:
  int fd_;
  bool connected_ = false;
};

std::string status_line(const std::string& response) {
  return response.substr(0, response.find("\r\n"));
}

std::size_t count(const std::string& hay, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) ++n;
  return n;
}

std::string get(const std::string& path, const std::string& extra = {}) {
  return "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + extra + "\r\n";
}

class HostileClients : public ::testing::Test {
 protected:
  void start(std::vector<std::string> extra = {}) {
    serve_ = test::start_serve(logs_.path(), "gb10-idle", "", std::move(extra));
    ASSERT_GT(serve_.port, 0);
  }
  std::string ask(const std::string& request) {
    Socket s(serve_.port);
    EXPECT_TRUE(s.connected());
    s.send(request);
    return s.read_all();
  }
  int port() const { return serve_.port; }

  test::TempDir logs_;
  test::ServeInstance serve_;
};

TEST_F(HostileClients, MultiRangeGetsTheWholeBodyOnce) {
  start();
  const std::string plain = ask(get("/", "Connection: close\r\n"));
  std::string ranges = "bytes=0-";
  for (int i = 0; i < 2000; ++i) ranges += ",0-";
  const std::string ranged = ask(get("/", "Connection: close\r\nRange: " + ranges + "\r\n"));
  EXPECT_EQ(status_line(ranged), "HTTP/1.1 200 OK");
  EXPECT_EQ(ranged.find("multipart/byteranges"), std::string::npos);
  EXPECT_EQ(ranged.size(), plain.size()) << "one copy of the page, not one per range";
  EXPECT_NE(ranged.find("Accept-Ranges: none"), std::string::npos);
}

TEST_F(HostileClients, GetBodyIsRefusedBeforeTheTokenAndNotRead) {
  test::write_text(logs_ / "token", "s3cret\n");
  start({"--token", (logs_ / "token").string()});
  Socket s(port());
  ASSERT_TRUE(s.connected());
  s.send(get("/metrics", "Content-Length: 300000000\r\n"));
  s.send(std::string(64 * 1024, 'x'));  // the server must not wait for the other 299.9 MB
  const std::string r = s.read_all();
  EXPECT_EQ(status_line(r), "HTTP/1.1 400 Bad Request") << r;
  EXPECT_NE(r.find("Connection: close"), std::string::npos);
  const std::string next = ask(get("/metrics",
                                   "Authorization: Bearer s3cret\r\n"
                                   "Connection: close\r\n"));
  EXPECT_EQ(status_line(next), "HTTP/1.1 200 OK");
}

TEST_F(HostileClients, OversizedHeadIsRefusedWith431) {
  start();
  EXPECT_EQ(status_line(ask(get("/metrics", "X-Pad: " + std::string(100000, 'a') + "\r\n"))),
            "HTTP/1.1 431 Request Header Fields Too Large");
  EXPECT_EQ(status_line(ask("GET /" + std::string(100000, 'a'))),
            "HTTP/1.1 431 Request Header Fields Too Large");
  std::string many;
  for (int i = 0; i < 2000; ++i) many += "X-" + std::to_string(i) + ": 1\r\n";
  EXPECT_EQ(status_line(ask(get("/metrics", many))),
            "HTTP/1.1 431 Request Header Fields Too Large");
}

TEST_F(HostileClients, HundredSlowClientsDoNotStarveAScrape) {
  start();
  // Each holds a connection with an unfinished head (the attack sends one more header line every
  // 2 s; from the server's side an idle unfinished head is the same).
  std::vector<std::unique_ptr<Socket>> slow;
  for (int i = 0; i < 100; ++i) {
    slow.push_back(std::make_unique<Socket>(port()));
    ASSERT_TRUE(slow.back()->connected());
    slow.back()->send("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: 1\r\n");
  }
  for (int i = 0; i < 3; ++i) {
    const std::string r = ask(get("/metrics", "Connection: close\r\n"));
    EXPECT_EQ(status_line(r), "HTTP/1.1 200 OK") << "scrape " << i;
    EXPECT_NE(r.find("sparkops_pool_total_bytes"), std::string::npos);
  }
  // A slow client is cut off at the header deadline with 408 instead of being held forever.
  EXPECT_EQ(status_line(slow.front()->read_all()), "HTTP/1.1 408 Request Timeout");
}

TEST_F(HostileClients, MoreSlowClientsThanSlotsStillLetAScrapeIn) {
  start();
  std::vector<std::unique_ptr<Socket>> slow;
  for (int i = 0; i < 300; ++i) {  // above the 256-connection table: the oldest are evicted
    slow.push_back(std::make_unique<Socket>(port()));
    slow.back()->send("GET /metrics HTTP/1.1\r\n");
  }
  EXPECT_EQ(status_line(ask(get("/metrics", "Connection: close\r\n"))), "HTTP/1.1 200 OK");
}

TEST_F(HostileClients, HostHeaderMustNameThisServer) {
  start({"--allow-host", "spark-01.lab.example"});
  const std::string close = "Connection: close\r\n";
  const auto with_host = [&](const std::string& host) {
    return status_line(ask("GET /api/status HTTP/1.1\r\nHost: " + host + "\r\n" + close + "\r\n"));
  };
  EXPECT_EQ(with_host("attacker.example:" + std::to_string(port())), "HTTP/1.1 403 Forbidden");
  EXPECT_EQ(with_host("127.0.0.1:" + std::to_string(port())), "HTTP/1.1 200 OK");
  EXPECT_EQ(with_host("localhost:" + std::to_string(port())), "HTTP/1.1 200 OK");
  EXPECT_EQ(with_host("[::1]:" + std::to_string(port())), "HTTP/1.1 200 OK");
  EXPECT_EQ(with_host("Spark-01.lab.example"), "HTTP/1.1 200 OK");
  EXPECT_EQ(status_line(ask("GET /api/status HTTP/1.1\r\n" + close + "\r\n")),
            "HTTP/1.1 400 Bad Request");
}

TEST_F(HostileClients, QueryTokenNeedsItsFlag) {
  test::write_text(logs_ / "token", "s3cret\n");
  start({"--token", (logs_ / "token").string()});
  const std::string close = "Connection: close\r\n";
  EXPECT_EQ(status_line(ask(get("/metrics?token=s3cret", close))), "HTTP/1.1 401 Unauthorized");
  EXPECT_EQ(status_line(ask(get("/metrics", "Authorization: Bearer s3cret\r\n" + close))),
            "HTTP/1.1 200 OK");
  EXPECT_EQ(status_line(ask(get("/", close))), "HTTP/1.1 200 OK") << "the page holds no data";
  // With a token the Host check is off: a rebinding page cannot send the token, and a fleet's
  // Prometheus scrapes by whatever DNS name it knows the machine by.
  EXPECT_EQ(status_line(ask("GET /metrics HTTP/1.1\r\nHost: spark-01.fleet.example\r\n"
                            "Authorization: Bearer s3cret\r\n" +
                            close + "\r\n")),
            "HTTP/1.1 200 OK");
  serve_.process->stop();

  start({"--token", (logs_ / "token").string(), "--allow-query-token"});
  EXPECT_EQ(status_line(ask(get("/metrics?token=s3cret", close))), "HTTP/1.1 200 OK");
  EXPECT_EQ(status_line(ask(get("/metrics?token=wrong", close))), "HTTP/1.1 401 Unauthorized");
}

TEST_F(HostileClients, PipelinedRequestsAreAllAnswered) {
  start();
  std::string burst;
  for (int i = 0; i < 4; ++i) burst += get("/metrics");
  burst += get("/api/status", "Connection: close\r\n");
  const std::string r = ask(burst);
  EXPECT_EQ(count(r, "HTTP/1.1 200 OK\r\n"), 5U);
}

TEST_F(HostileClients, HalfClosedRequestsAreAnswered) {
  start();
  int answered = 0;
  for (int i = 0; i < 50; ++i) {
    Socket s(port());
    ASSERT_TRUE(s.connected());
    s.send(get("/metrics"));
    s.half_close();
    answered += status_line(s.read_all()) == "HTTP/1.1 200 OK" ? 1 : 0;
  }
  EXPECT_EQ(answered, 50);
}

}  // namespace
}  // namespace sparkops
