#include "base/file_io.hpp"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <random>

#include <fmt/format.h>

#include "base/fd.hpp"

namespace sparkops {

Error errno_error(int err, const std::filesystem::path& path, std::string_view verb) {
  Errc code = Errc::io;
  if (err == ENOENT || err == ENOTDIR) code = Errc::not_found;
  if (err == EACCES || err == EPERM) code = Errc::permission_denied;
  return Error{code, fmt::format("{}: cannot {}: {}", path.string(), verb, std::strerror(err))};
}

namespace {

std::string_view file_kind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a file";
}

}  // namespace

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

Status write_file_atomic(const std::filesystem::path& path, std::string_view content,
                         OutputTrust trust) {
  const auto name = path.filename();
  if (name.empty() || name == "." || name == "..") {
    return fail(Errc::invalid_argument, fmt::format("{}: not a file name", path.string()));
  }
  auto dir = open_output_dir(output_parent(path), trust);
  if (!dir) return tl::unexpected(for_file(path, dir.error()));
  // An unpredictable name and O_EXCL|O_NOFOLLOW: a symlink planted for the temporary is never
  // written through (the old NAME.tmp.<pid> was guessable).
  std::random_device random;
  std::string tmp;
  Fd fd;
  for (int attempt = 0; attempt < 16 && !fd.valid(); ++attempt) {
    tmp = fmt::format(".{}.tmp-{:08x}{:08x}", name.string(), random(), random());
    fd.reset(::openat(dir->get(), tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                      0644));
    if (!fd.valid() && errno != EEXIST) {
      return tl::unexpected(errno_error(errno, output_parent(path) / tmp, "create"));
    }
  }
  if (!fd.valid()) return tl::unexpected(errno_error(EEXIST, path, "create a temporary for"));
  const auto tmp_path = output_parent(path) / tmp;
  const auto drop = [&](Error e) -> Status {
    ::unlinkat(dir->get(), tmp.c_str(), 0);
    return tl::unexpected(std::move(e));
  };
  if (auto st = write_all(fd.get(), content, tmp_path); !st) return drop(st.error());
  if (::fsync(fd.get()) != 0) return drop(errno_error(errno, tmp_path, "fsync"));
  fd.reset();
  // renameat replaces whatever holds the name (a symlink included) without following it.
  if (::renameat(dir->get(), tmp.c_str(), dir->get(), name.c_str()) != 0) {
    return drop(errno_error(errno, path, "rename into place"));
  }
  ::fsync(dir->get());  // the rename itself survives a crash; some filesystems refuse: ignored
  return {};
}

}  // namespace sparkops
