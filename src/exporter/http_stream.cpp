#include "exporter/http_stream.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <openssl/err.h>

namespace sparkops::exporter {

ConnectionStream::ConnectionStream(int fd, std::string remote_ip, int remote_port,
                                   std::string local_ip, int local_port)
    : fd_(fd),
      remote_ip_(std::move(remote_ip)),
      remote_port_(remote_port),
      local_ip_(std::move(local_ip)),
      local_port_(local_port) {}

ConnectionStream::~ConnectionStream() {
  if (ssl_ != nullptr) SSL_free(ssl_);
}

bool ConnectionStream::start_tls(SSL_CTX* ctx, Clock::time_point deadline) {
  ssl_ = SSL_new(ctx);
  if (ssl_ == nullptr || SSL_set_fd(ssl_, fd_) != 1) return false;
  // A write may return after part of the buffer; httplib retries with the rest.
  SSL_set_mode(ssl_, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  deadline_ = deadline;
  for (;;) {
    ERR_clear_error();
    const int rc = SSL_accept(ssl_);
    if (rc == 1) return true;
    if (!tls_retry(rc)) return false;
  }
}

void ConnectionStream::end_tls() {
  if (ssl_ == nullptr || eof_) return;
  ERR_clear_error();
  (void)SSL_shutdown(ssl_);  // queues close_notify; the peer's is not awaited
}

bool ConnectionStream::tls_retry(int rc) {
  switch (SSL_get_error(ssl_, rc)) {
    case SSL_ERROR_WANT_READ:
      return wait(POLLIN);
    case SSL_ERROR_WANT_WRITE:
      return wait(POLLOUT);
    case SSL_ERROR_ZERO_RETURN:
      eof_ = true;
      return false;
    case SSL_ERROR_SYSCALL:
      if (rc < 0 && errno == EINTR) return true;
      eof_ = true;  // the peer went away without close_notify
      return false;
    default:
      ERR_clear_error();
      return false;
  }
}

bool ConnectionStream::wait(short events) {
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now()).count();
    if (left <= 0) {
      limit_ = Limit::timed_out;
      return false;
    }
    pollfd p{fd_, events, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (n > 0) return true;  // ready, or an error/hangup the next call reports
    if (n < 0 && errno != EINTR) return false;
  }
}

bool ConnectionStream::fill() {
  if (eof_) return false;
  while (ssl_ != nullptr) {
    ERR_clear_error();
    const int n = SSL_read(ssl_, buffer_.data(), static_cast<int>(buffer_.size()));
    if (n > 0) {
      begin_ = 0;
      end_ = static_cast<std::size_t>(n);
      return true;
    }
    if (!tls_retry(n)) return false;
  }
  for (;;) {
    const ssize_t n = ::recv(fd_, buffer_.data(), buffer_.size(), MSG_DONTWAIT);
    if (n > 0) {
      begin_ = 0;
      end_ = static_cast<std::size_t>(n);
      return true;
    }
    if (n == 0) {
      eof_ = true;
      return false;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return false;
    if (!wait(POLLIN)) return false;
  }
}

bool ConnectionStream::wait_for_request(Clock::time_point deadline) {
  if (begin_ < end_) return true;
  deadline_ = deadline;
  const bool got = fill();
  if (!got && limit_ == Limit::timed_out) limit_ = Limit::none;  // an idle close, not an error
  return got;
}

void ConnectionStream::begin_head(std::size_t max_bytes, Clock::time_point deadline) {
  read_budget_ = max_bytes;
  deadline_ = deadline;
  limit_ = Limit::none;
  written_ = 0;
}

void ConnectionStream::begin_response(Clock::time_point deadline) {
  read_budget_ = 0;
  deadline_ = deadline;
}

bool ConnectionStream::is_readable() const {
  return begin_ < end_ || (!eof_ && read_budget_ > 0);
}

bool ConnectionStream::is_writable() const {
  return true;  // write() itself waits, bounded by the response deadline
}

ssize_t ConnectionStream::read(char* ptr, std::size_t size) {
  if (size == 0) return 0;
  if (read_budget_ == 0) {
    if (limit_ == Limit::none) limit_ = Limit::too_large;
    return -1;
  }
  if (begin_ == end_ && !fill()) return eof_ ? 0 : -1;
  const std::size_t n = std::min({size, end_ - begin_, read_budget_});
  std::memcpy(ptr, buffer_.data() + begin_, n);
  begin_ += n;
  read_budget_ -= n;
  return static_cast<ssize_t>(n);
}

ssize_t ConnectionStream::write(const char* ptr, std::size_t size) {
  while (ssl_ != nullptr) {
    if (size == 0) return 0;
    ERR_clear_error();
    const int n = SSL_write(ssl_, ptr, static_cast<int>(std::min<std::size_t>(size, 1 << 20)));
    if (n > 0) {
      written_ += static_cast<std::size_t>(n);
      return n;
    }
    if (!tls_retry(n)) return -1;
  }
  for (;;) {
    const ssize_t n = ::send(fd_, ptr, size, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n >= 0) {
      written_ += static_cast<std::size_t>(n);
      return n;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
    if (!wait(POLLOUT)) return -1;
  }
}

void ConnectionStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  ip = remote_ip_;
  port = remote_port_;
}

void ConnectionStream::get_local_ip_and_port(std::string& ip, int& port) const {
  ip = local_ip_;
  port = local_port_;
}

}  // namespace sparkops::exporter
