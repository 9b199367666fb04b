#include "watch/watch_output.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "base/output_file.hpp"
#include "base/time_format.hpp"

namespace sparkops::watch {

namespace {

bool is_terminator(char c) {
  return c == '\n' || c == '\r';
}

// write(2) until done. EAGAIN (a non-blocking terminal) waits for room; other errors return errno.
int write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n > 0) {
      data += n;
      size -= static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd, POLLOUT, 0};
      ::poll(&p, 1, 1000);
      continue;
    }
    return n < 0 ? errno : EIO;
  }
  return 0;
}

}  // namespace

Result<OutputSink> OutputSink::open(const std::filesystem::path& log,
                                    const std::filesystem::path& sidecar, OutputTrust trust) {
  // Read-write: the last byte of an existing log decides whether a record starts at its end.
  auto log_fd = open_output_append(log, trust, AppendAccess::read_write);
  if (!log_fd) return tl::unexpected(log_fd.error());
  auto sidecar_fd = open_output_append(sidecar, trust);
  if (!sidecar_fd) return tl::unexpected(sidecar_fd.error());
  OutputSink sink;
  sink.log_path_ = log;
  sink.log_fd_ = log_fd->release();
  sink.sidecar_fd_ = sidecar_fd->release();
  struct stat st {};
  if (::fstat(sink.log_fd_, &st) == 0 && S_ISREG(st.st_mode))
    sink.base_ = static_cast<std::uint64_t>(st.st_size);
  sink.offset_ = sink.base_;
  if (sink.base_ > 0) {
    // Appending: the next record starts here only when the old log ended with a terminator.
    char last = '\n';
    if (::pread(sink.log_fd_, &last, 1, static_cast<off_t>(sink.base_ - 1)) == 1)
      sink.at_record_start_ = is_terminator(last);
  }
  return sink;
}

OutputSink::OutputSink(OutputSink&& o) noexcept
    : log_path_(std::move(o.log_path_)),
      log_fd_(o.log_fd_),
      sidecar_fd_(o.sidecar_fd_),
      base_(o.base_),
      offset_(o.offset_),
      max_bytes_(o.max_bytes_),
      at_record_start_(o.at_record_start_),
      last_entry_ms_(o.last_entry_ms_),
      sidecar_buf_(std::move(o.sidecar_buf_)),
      failed_(o.failed_),
      failure_(std::move(o.failure_)),
      out_dead_(o.out_dead_),
      err_dead_(o.err_dead_) {
  o.log_fd_ = -1;
  o.sidecar_fd_ = -1;
}

OutputSink::~OutputSink() {
  if (log_fd_ >= 0) ::close(log_fd_);
  if (sidecar_fd_ >= 0) ::close(sidecar_fd_);
}

void OutputSink::to_terminal(int stream, std::string_view data) {
  bool& dead = stream == 1 ? out_dead_ : err_dead_;
  if (dead) return;
  if (write_all(stream == 1 ? STDOUT_FILENO : STDERR_FILENO, data.data(), data.size()) != 0)
    dead = true;
}

std::uint64_t OutputSink::forward(int stream, std::string_view data, SystemTime arrival) {
  const std::uint64_t start = offset_;
  to_terminal(stream, data);
  if (!failed_ && !data.empty() && bytes() + data.size() > max_bytes_) {
    fail_files(log_path_.string(),
               fmt::format("reached watch.max_log_bytes ({} bytes)", max_bytes_));
  }
  if (!failed_ && !data.empty()) {
    // The first record starting in this chunk (later ones arrived in the same millisecond).
    std::optional<std::size_t> first;
    bool at_start = at_record_start_;
    for (std::size_t i = 0; i < data.size(); ++i) {
      if (is_terminator(data[i])) {
        at_start = true;
      } else if (at_start) {
        first = i;
        break;
      }
    }
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(arrival.time_since_epoch()).count();
    if (first && ms != last_entry_ms_) {
      last_entry_ms_ = ms;
      sidecar_buf_ += fmt::format("{}\t{}\n", format_iso8601_utc_ms(arrival), start + *first);
    }
    if (const int e = write_all(log_fd_, data.data(), data.size()); e != 0)
      fail_files(log_path_.string(), std::strerror(e));
  }
  at_record_start_ = is_terminator(data.empty() ? (at_record_start_ ? '\n' : 'x') : data.back());
  offset_ += data.size();
  return start;
}

void OutputSink::flush_sidecar() {
  if (failed_ || sidecar_buf_.empty()) return;
  if (const int e = write_all(sidecar_fd_, sidecar_buf_.data(), sidecar_buf_.size()); e != 0) {
    std::filesystem::path p = log_path_;
    p += ".times";
    fail_files(p.string(), std::strerror(e));
  }
  sidecar_buf_.clear();
}

void OutputSink::sync() {
  flush_sidecar();
  if (failed_) return;
  ::fsync(log_fd_);
  ::fsync(sidecar_fd_);
}

void OutputSink::fail_files(std::string_view what, std::string_view reason) {
  if (failed_) return;
  failed_ = true;
  sidecar_buf_.clear();
  failure_ = fmt::format(
      "{}: {}; the job keeps running and its output still reaches the terminal, but "
      "the log and its .times sidecar stop at byte {}",
      what, reason, offset_);
}

std::optional<std::string> OutputSink::take_failure() {
  auto f = std::move(failure_);
  failure_.reset();
  return f;
}

void RecordSplitter::feed(std::string_view data, std::uint64_t offset, const Sink& sink) {
  std::size_t begin = 0;
  for (std::size_t i = 0; i < data.size(); ++i) {
    if (!is_terminator(data[i])) continue;
    if (!partial_.empty()) {
      partial_.append(data.substr(begin, i - begin));
      sink(partial_, partial_offset_);
      partial_.clear();
    } else if (i > begin) {
      sink(data.substr(begin, i - begin), offset + begin);
    }
    begin = i + 1;
  }
  if (begin >= data.size()) return;
  if (partial_.empty()) partial_offset_ = offset + begin;
  partial_.append(data.substr(begin));
  while (partial_.size() >= max_) {
    sink(std::string_view(partial_).substr(0, max_), partial_offset_);
    partial_.erase(0, max_);
    partial_offset_ += max_;
  }
}

void RecordSplitter::finish(const Sink& sink) {
  if (!partial_.empty()) sink(partial_, partial_offset_);
  partial_.clear();
}

}  // namespace sparkops::watch
