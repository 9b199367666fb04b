#include "sampling/appender.hpp"

#include <cerrno>
#include <cstring>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "base/text.hpp"

namespace sparkops::sampling {

namespace {

constexpr std::size_t kHeadBytes = 64 * 1024;
constexpr std::size_t kTailChunk = 64 * 1024;

Error errno_error(const std::filesystem::path& path, std::string_view what, int err) {
  const Errc code = (err == EACCES || err == EPERM) ? Errc::permission_denied
                    : err == ENOENT                 ? Errc::not_found
                                                    : Errc::io;
  return Error{code, fmt::format("{}: {}: {}", path.string(), what, std::strerror(err))};
}

ssize_t pread_all(int fd, char* buf, std::size_t size, off_t offset) {
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(fd, buf + done, size - done, offset + static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  return static_cast<ssize_t>(done);
}

// Offset just past the last '\n' in the file (0 when none), or -1 on a read error.
off_t end_of_last_line(int fd, off_t size) {
  std::string buf(kTailChunk, '\0');
  off_t end = size;
  while (end > 0) {
    const off_t start =
        end > static_cast<off_t>(kTailChunk) ? end - static_cast<off_t>(kTailChunk) : 0;
    const auto len = static_cast<std::size_t>(end - start);
    if (pread_all(fd, buf.data(), len, start) != static_cast<ssize_t>(len)) return -1;
    for (std::size_t i = len; i > 0; --i) {
      if (buf[i - 1] == '\n') return start + static_cast<off_t>(i);
    }
    end = start;
  }
  return 0;
}

struct OpenedFile {
  int fd = -1;
  std::uint64_t size = 0;
  OpenReport report;
  bool had_content = false;
};

Result<OpenedFile> open_file(const std::filesystem::path& path, std::string_view header,
                             const DurableAppender::HeaderCheck& check_header, OutputTrust trust) {
  OpenedFile f;
  auto opened = open_output_append(path, trust, AppendAccess::read_write);
  if (!opened) return tl::unexpected(opened.error());
  f.fd = opened->release();
  const auto close_with = [&](Error e) -> Result<OpenedFile> {
    ::close(f.fd);
    return tl::unexpected(std::move(e));
  };
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) return close_with(errno_error(path, "cannot stat", errno));
  if (!S_ISREG(st.st_mode)) {
    return close_with(
        Error{Errc::invalid_argument, fmt::format("{}: not a regular file", path.string())});
  }
  const off_t size = st.st_size;
  if (size == 0) {
    f.report.created = true;
    return f;
  }
  const off_t whole = end_of_last_line(f.fd, size);
  if (whole < 0) return close_with(errno_error(path, "cannot read", errno));
  const auto head_len =
      static_cast<std::size_t>(std::min<off_t>(whole, static_cast<off_t>(kHeadBytes)));
  std::string head(head_len, '\0');
  if (pread_all(f.fd, head.data(), head_len, 0) != static_cast<ssize_t>(head_len)) {
    return close_with(errno_error(path, "cannot read", errno));
  }
  // Only (a prefix of) our own header, possibly torn: start the file again.
  bool restart = false;
  if (whole == 0) {
    std::string fragment(static_cast<std::size_t>(std::min<off_t>(size, 4096)), '\0');
    if (pread_all(f.fd, fragment.data(), fragment.size(), 0) < 0) {
      return close_with(errno_error(path, "cannot read", errno));
    }
    const bool ours = header.empty() ? starts_with(fragment, "{") : starts_with(header, fragment);
    if (!ours) {
      return close_with(Error{
          Errc::conflict, fmt::format("{}: exists and does not start with a sample header ({}); "
                                      "refusing to append",
                                      path.string(), quote_for_message(fragment))});
    }
    restart = true;
  } else if (static_cast<std::size_t>(whole) <= header.size() && starts_with(header, head)) {
    restart = true;
  }
  if (restart) {
    if (::ftruncate(f.fd, 0) != 0) return close_with(errno_error(path, "cannot truncate", errno));
    f.report.created = true;
    f.report.torn_bytes_cut = static_cast<std::uint64_t>(size);
    return f;
  }
  if (auto ok = check_header(head); !ok) return close_with(ok.error());
  if (whole < size) {
    if (::ftruncate(f.fd, whole) != 0)
      return close_with(errno_error(path, "cannot cut the torn last line", errno));
    f.report.torn_bytes_cut = static_cast<std::uint64_t>(size - whole);
  }
  f.size = static_cast<std::uint64_t>(whole);
  f.had_content = true;
  return f;
}

}  // namespace

Result<DurableAppender> DurableAppender::open(std::filesystem::path path, std::string header,
                                              std::string restart_marker, HeaderCheck check_header,
                                              AppenderOptions options, OpenReport* report) {
  DurableAppender a;
  a.path_ = std::move(path);
  a.header_ = std::move(header);
  a.restart_marker_ = std::move(restart_marker);
  a.check_header_ = std::move(check_header);
  a.options_ = std::move(options);
  if (!a.options_.write)
    a.options_.write = [](int fd, const void* data, std::size_t size) {
      return ::write(fd, data, size);
    };
  auto opened = a.open_fd();
  if (!opened) return tl::unexpected(opened.error());
  if (report != nullptr) *report = *opened;
  return a;
}

DurableAppender::DurableAppender(DurableAppender&& other) noexcept {
  *this = std::move(other);
}

DurableAppender& DurableAppender::operator=(DurableAppender&& other) noexcept {
  if (this == &other) return *this;
  if (fd_ >= 0) ::close(fd_);
  path_ = std::move(other.path_);
  header_ = std::move(other.header_);
  restart_marker_ = std::move(other.restart_marker_);
  check_header_ = std::move(other.check_header_);
  options_ = std::move(other.options_);
  fd_ = std::exchange(other.fd_, -1);
  size_ = other.size_;
  rows_since_sync_ = other.rows_since_sync_;
  backlog_ = std::move(other.backlog_);
  failing_ = other.failing_;
  header_pending_ = other.header_pending_;
  dropped_rows_ = other.dropped_rows_;
  written_rows_ = other.written_rows_;
  return *this;
}

DurableAppender::~DurableAppender() {
  if (fd_ >= 0) {
    ::fsync(fd_);
    ::close(fd_);
  }
}

Result<OpenReport> DurableAppender::open_fd() {
  auto opened = open_file(path_, header_, check_header_, options_.trust);
  if (!opened) return tl::unexpected(opened.error());
  if (fd_ >= 0) ::close(fd_);
  fd_ = opened->fd;
  size_ = opened->size;
  rows_since_sync_ = 0;
  const std::string& first = opened->had_content ? restart_marker_ : header_;
  if (!first.empty()) {
    backlog_.push_front(first);
    header_pending_ = true;
  }
  drain(std::nullopt);
  return opened->report;
}

bool DurableAppender::write_one(const std::string& row, Error* error) {
  if (fd_ < 0) {
    *error = Error{Errc::io, fmt::format("{}: not open", path_.string())};
    return false;
  }
  ssize_t n = -1;
  do {
    n = options_.write(fd_, row.data(), row.size());
  } while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(row.size())) {
    size_ += row.size();
    if (options_.fsync_every != 0 && ++rows_since_sync_ >= options_.fsync_every) {
      ::fsync(fd_);
      rows_since_sync_ = 0;
    }
    return true;
  }
  const int err = n < 0 ? errno : ENOSPC;
  if (n > 0) {
    // A short write left part of a row: cut it so the file ends on a whole row. O_APPEND put it at
    // the end, so the end minus what we wrote is where it began (even if the file was truncated).
    struct stat st {};
    if (::fstat(fd_, &st) == 0 && st.st_size >= n) ::ftruncate(fd_, st.st_size - n);
  }
  *error = errno_error(path_, "write failed", err);
  return false;
}

AppendReport DurableAppender::drain(std::optional<std::string> row) {
  AppendReport report;
  if (row) {
    if (backlog_.empty()) {
      Error err;
      if (write_one(*row, &err)) {
        ++written_rows_;
        report.dropped_rows = dropped_rows_;
        return report;
      }
      if (!failing_) report.failed_now = err;
      failing_ = true;
      backlog_.push_back(std::move(*row));
      report.buffered_rows = backlog_.size();
      report.dropped_rows = dropped_rows_;
      return report;  // retried on the next append, not in a tight loop now
    } else {
      backlog_.push_back(std::move(*row));
    }
  }
  while (!backlog_.empty()) {
    Error err;
    if (!write_one(backlog_.front(), &err)) {
      if (!failing_) report.failed_now = err;
      failing_ = true;
      break;
    }
    backlog_.pop_front();
    if (!std::exchange(header_pending_, false)) ++written_rows_;
  }
  if (backlog_.empty() && failing_) {
    failing_ = false;
    report.recovered = true;
  }
  // Keep the newest rows; a header/marker waiting at the front is never dropped.
  const std::size_t keep_front = header_pending_ ? 1 : 0;
  while (backlog_.size() > options_.memory_buffer_rows + keep_front) {
    backlog_.erase(backlog_.begin() + static_cast<std::ptrdiff_t>(keep_front));
    ++dropped_rows_;
  }
  report.buffered_rows = backlog_.size();
  report.dropped_rows = dropped_rows_;
  return report;
}

AppendReport DurableAppender::append(std::string row) {
  return drain(std::move(row));
}

AppendReport DurableAppender::retry() {
  return drain(std::nullopt);
}

Result<OpenReport> DurableAppender::reopen() {
  return open_fd();
}

Status DurableAppender::sync() {
  if (fd_ >= 0 && ::fsync(fd_) != 0)
    return tl::unexpected(errno_error(path_, "fsync failed", errno));
  return {};
}

}  // namespace sparkops::sampling
