#pragma once
// One client connection as a cpp-httplib Stream, kept for the connection's whole life.
//
// cpp-httplib 0.11 builds a fresh SocketStream (with its own 4 KiB read-ahead buffer) for every
// keep-alive request, so bytes of a pipelined second request that the first read pulled in are
// dropped (1 of 5 pipelined requests answered); its write path asks is_socket_alive(), which reads
// a pending FIN as "dead", so a client that half-closes after sending gets no answer; and its read
// timeout restarts with every byte, so a client sending one header line every 2 s holds a thread
// forever while reading an unbounded request line into memory. This stream fixes each:
//   - one read-ahead buffer for the connection (pipelined requests are all answered);
//   - the request head (request line + headers) is bounded in bytes and must arrive by one
//     deadline; past either, read() fails and limit() says which (431 / 408);
//   - once the head is parsed no more bytes are read (the exporter accepts no request bodies);
//   - writes wait for POLLOUT up to one deadline for the whole response and never probe the
//     read side, so a half-closed client still gets its answer.
// With start_tls() the same stream runs over TLS (OpenSSL on the non-blocking fd): the handshake
// must finish by its deadline, reads and writes go through SSL_read/SSL_write with the same
// deadlines, waiting for whichever direction OpenSSL asks for.
// Not thread-safe: one connection thread owns it. The fd is non-blocking and owned by the caller.

#include <sys/types.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <string>

#include <httplib.h>
#include <openssl/ssl.h>

namespace sparkops::exporter {

class ConnectionStream final : public httplib::Stream {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Limit { none, too_large, timed_out };

  ConnectionStream(int fd, std::string remote_ip, int remote_port, std::string local_ip,
                   int local_port);
  ~ConnectionStream() override;
  ConnectionStream(const ConnectionStream&) = delete;
  ConnectionStream& operator=(const ConnectionStream&) = delete;

  // Runs the TLS server handshake on the fd with a new SSL of `ctx`, by `deadline`. False on a
  // failed or late handshake. The stream owns the SSL from here on.
  bool start_tls(SSL_CTX* ctx, Clock::time_point deadline);
  SSL* tls() const { return ssl_; }
  // Sends TLS close_notify without waiting for the peer's (no-op without TLS).
  void end_tls();

  // True once a byte of the next request is buffered or arrives before `deadline`; false on
  // end of stream, error or timeout.
  bool wait_for_request(Clock::time_point deadline);
  // Starts reading a request head: at most `max_bytes` delivered, all before `deadline`.
  void begin_head(std::size_t max_bytes, Clock::time_point deadline);
  // The head is parsed: reads fail from now on; the response must be written by `deadline`.
  void begin_response(Clock::time_point deadline);

  Limit limit() const { return limit_; }
  std::size_t written() const { return written_; }  // bytes written since begin_head

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, std::size_t size) override;
  ssize_t write(const char* ptr, std::size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  int socket() const override { return fd_; }

 private:
  // Waits for `events` on the fd until the current deadline; false on timeout (sets timed_out).
  bool wait(short events);
  bool fill();  // one recv into the buffer; false on EOF, error or timeout
  // After an SSL call returned `rc`: waits for what OpenSSL wants and returns true to retry;
  // false on EOF (sets eof_), error or timeout.
  bool tls_retry(int rc);

  int fd_;
  SSL* ssl_ = nullptr;
  std::string remote_ip_;
  int remote_port_;
  std::string local_ip_;
  int local_port_;
  std::array<char, 4096> buffer_{};
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  bool eof_ = false;
  std::size_t read_budget_ = 0;
  Clock::time_point deadline_{};
  Limit limit_ = Limit::none;
  std::size_t written_ = 0;
};

}  // namespace sparkops::exporter
