#include "base/file_io.hpp"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

namespace sparkops {

Error errno_error(int err, const std::filesystem::path& path, std::string_view verb) {
  Errc code = Errc::io;
  if (err == ENOENT || err == ENOTDIR) code = Errc::not_found;
  if (err == EACCES || err == EPERM) code = Errc::permission_denied;
  return Error{code, fmt::format("{}: cannot {}: {}", path.string(), verb, std::strerror(err))};
}

namespace {

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

std::string_view file_kind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a file";
}

Status write_all(int fd, std::string_view content, const std::filesystem::path& path) {
  while (!content.empty()) {
    const ssize_t n = ::write(fd, content.data(), content.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return tl::unexpected(errno_error(errno, path, "write"));
    }
    content.remove_prefix(static_cast<std::size_t>(n));
  }
  return {};
}

}  // namespace

Result<std::string> read_file(const std::filesystem::path& path, std::size_t max_bytes,
                              NonRegular non_regular) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) return tl::unexpected(errno_error(errno, path, "open"));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return tl::unexpected(errno_error(errno, path, "stat"));
  if (S_ISDIR(st.st_mode)) return tl::unexpected(errno_error(EISDIR, path, "read"));
  if (!S_ISREG(st.st_mode)) {
    if (non_regular == NonRegular::refuse) {
      return fail(Errc::invalid_argument,
                  fmt::format("{}: not a regular file ({})", path.string(), file_kind(st.st_mode)));
    }
    // A pipe the user named: wait for its writer like any reader would.
    const int flags = ::fcntl(fd.get(), F_GETFL);
    if (flags >= 0) ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
  }
  std::string out;
  char buf[65536];
  while (true) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return tl::unexpected(errno_error(errno, path, "read"));
    }
    if (n == 0) break;
    if (out.size() + static_cast<std::size_t>(n) > max_bytes) {
      return fail(Errc::too_large,
                  fmt::format("{}: larger than the {} byte limit", path.string(), max_bytes));
    }
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

Status write_file_atomic(const std::filesystem::path& path, std::string_view content) {
  std::filesystem::path tmp = path;
  tmp += fmt::format(".tmp.{}", ::getpid());
  {
    Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (fd.get() < 0) return tl::unexpected(errno_error(errno, tmp, "create"));
    if (auto st = write_all(fd.get(), content, tmp); !st) {
      ::unlink(tmp.c_str());
      return st;
    }
    if (::fsync(fd.get()) != 0) {
      const int err = errno;
      ::unlink(tmp.c_str());
      return tl::unexpected(errno_error(err, tmp, "fsync"));
    }
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return tl::unexpected(errno_error(err, path, "rename into place"));
  }
  return {};
}

Status write_existing_file(const std::filesystem::path& path, std::string_view content) {
  Fd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (fd.get() < 0) return tl::unexpected(errno_error(errno, path, "open for writing"));
  return write_all(fd.get(), content, path);
}

}  // namespace sparkops
