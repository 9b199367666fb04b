#include "base/held_file.hpp"

#include "base/file_io.hpp"

#include <cerrno>
#include <cstring>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

namespace sparkops {

namespace {

constexpr std::size_t kInitialBuffer = 4096;

// The errors a read gives for a file whose object no longer exists (header: reread()).
bool gone(int err) {
  return err == ENOENT || err == ENODEV || err == ENXIO || err == ESRCH || err == ESTALE;
}

}  // namespace

Result<HeldFile> HeldFile::open(const std::filesystem::path& path, std::size_t max_bytes) {
  // O_NONBLOCK and a regular-file check: a FIFO planted in a captured root must not hang the
  // sampler (sysfs attributes and /proc files are regular files).
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return tl::unexpected(errno_error(errno, path, "open"));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return fail(Errc::invalid_argument, fmt::format("{}: not a regular file", path.string()));
  }
  return HeldFile(fd, path, max_bytes);
}

HeldFile::HeldFile(int fd, std::filesystem::path path, std::size_t max_bytes)
    : fd_(fd), path_(std::move(path)), max_bytes_(max_bytes) {}

HeldFile::HeldFile(HeldFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      path_(std::move(other.path_)),
      max_bytes_(other.max_bytes_),
      buffer_(std::move(other.buffer_)) {}

HeldFile& HeldFile::operator=(HeldFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    max_bytes_ = other.max_bytes_;
    buffer_ = std::move(other.buffer_);
  }
  return *this;
}

HeldFile::~HeldFile() {
  if (fd_ >= 0) ::close(fd_);
}

Result<std::string_view> HeldFile::reread() {
  if (buffer_.empty()) buffer_.resize(kInitialBuffer);
  std::size_t used = 0;
  while (true) {
    const ssize_t n =
        ::pread(fd_, buffer_.data() + used, buffer_.size() - used, static_cast<off_t>(used));
    if (n < 0) {
      const int err = errno;
      if (err == EINTR) continue;
      if (gone(err)) {
        return fail(Errc::not_found,
                    fmt::format("{}: gone: {}", path_.string(), std::strerror(err)));
      }
      return tl::unexpected(errno_error(err, path_, "read"));
    }
    used += static_cast<std::size_t>(n);
    if (used < buffer_.size()) break;  // short read: the whole content (see the header)
    if (buffer_.size() >= max_bytes_) {
      return fail(Errc::too_large,
                  fmt::format("{}: larger than the {} byte limit", path_.string(), max_bytes_));
    }
    buffer_.resize(std::min(buffer_.size() * 2, max_bytes_));
  }
  return std::string_view(buffer_.data(), used);
}

bool HeldFile::unlinked() const {
  struct stat st {};
  return ::fstat(fd_, &st) == 0 && st.st_nlink == 0;
}

}  // namespace sparkops
