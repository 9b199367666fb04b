#include "base/output_file.hpp"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/file_io.hpp"
#include "base/text.hpp"

namespace sparkops {

namespace {

constexpr std::string_view kTrustHint = "pass --trust-output-path to write there anyway";

// True when `gid` is the user private group of `owner`: named like the user, the user's primary
// group, and listing nobody else. Such a group-writable directory is writable by its owner only.
bool private_group_of(gid_t gid, uid_t owner) {
  passwd pw{};
  passwd* pw_found = nullptr;
  std::vector<char> pw_buf(16 * 1024);
  if (::getpwuid_r(owner, &pw, pw_buf.data(), pw_buf.size(), &pw_found) != 0 || !pw_found) {
    return false;
  }
  if (pw.pw_gid != gid) return false;
  group gr{};
  group* gr_found = nullptr;
  std::vector<char> gr_buf(64 * 1024);
  if (::getgrgid_r(gid, &gr, gr_buf.data(), gr_buf.size(), &gr_found) != 0 || !gr_found) {
    return false;
  }
  if (std::strcmp(gr.gr_name, pw.pw_name) != 0) return false;
  for (char** member = gr.gr_mem; member && *member; ++member) {
    if (std::strcmp(*member, pw.pw_name) != 0) return false;
  }
  return true;
}

Error refused(const std::filesystem::path& path, std::string_view why) {
  return Error{Errc::conflict, fmt::format("{}: {}", path.string(), why)};
}

std::string_view kind_of(mode_t mode) {
  if (S_ISLNK(mode)) return "a symlink";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISDIR(mode)) return "a directory";
  return "not a regular file";
}

// The checks every output file gets once open (or before opening, from fstatat).
std::optional<Error> check_output_file(const std::filesystem::path& path, const struct stat& st) {
  if (S_ISLNK(st.st_mode)) return refused(path, "a symlink; sparkops never writes through one");
  if (!S_ISREG(st.st_mode)) {
    return refused(path, fmt::format("{}, not a regular file; sparkops does not write to it",
                                     kind_of(st.st_mode)));
  }
  if (st.st_nlink > 1) {
    return refused(path, fmt::format("has {} hard links (another name may be a file of someone "
                                     "else's); sparkops does not write to it",
                                     st.st_nlink));
  }
  return std::nullopt;
}

Status clear_nonblock(int fd, const std::filesystem::path& path) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    return tl::unexpected(errno_error(errno, path, "set blocking mode"));
  }
  return {};
}

}  // namespace

std::optional<std::string> readable_by_others(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  const bool others = (st.st_mode & S_IROTH) != 0;
  const bool group = (st.st_mode & S_IRGRP) != 0 && !private_group_of(st.st_gid, st.st_uid);
  if (!others && !group) return std::nullopt;
  return fmt::format(
      "{}: readable by {} (mode {:04o}); a secret should be readable by its owner "
      "only: chmod 600 {}",
      path.string(), others ? "every user" : "its group", st.st_mode & 07777, path.string());
}

Error for_file(const std::filesystem::path& path, Error dir_error) {
  dir_error.detail = fmt::format("{}: cannot write here: {}", path.string(), dir_error.detail);
  return dir_error;
}

std::filesystem::path output_parent(const std::filesystem::path& path) {
  const auto parent = path.parent_path();
  return parent.empty() ? std::filesystem::path(".") : parent;
}

Result<Fd> open_output_dir(const std::filesystem::path& dir, OutputTrust trust) {
  std::string d = dir.empty() ? std::string(".") : dir.string();
  while (d.size() > 1 && d.back() == '/') d.pop_back();  // "runs/" must not dodge O_NOFOLLOW
  const bool checked = trust == OutputTrust::checked;
  Fd fd(::open(d.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | (checked ? O_NOFOLLOW : 0)));
  if (!fd.valid()) {
    const int err = errno;
    struct stat lst {};
    if (checked && (err == ELOOP || err == ENOTDIR) && ::lstat(d.c_str(), &lst) == 0 &&
        S_ISLNK(lst.st_mode)) {
      return tl::unexpected(
          refused(d, fmt::format("a symlinked directory; sparkops does not write through it ({})",
                                 kTrustHint)));
    }
    return tl::unexpected(errno_error(err, d, "open the directory"));
  }
  if (checked) {
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return tl::unexpected(errno_error(errno, d, "stat"));
    const bool others = (st.st_mode & S_IWOTH) != 0;
    const bool group = (st.st_mode & S_IWGRP) != 0 && !private_group_of(st.st_gid, st.st_uid);
    if ((others || group) && (st.st_mode & S_ISVTX) == 0) {
      return tl::unexpected(refused(
          d, fmt::format("writable by other users (mode {:04o}, no sticky bit), who could swap "
                         "what sparkops writes; {}",
                         st.st_mode & 07777, kTrustHint)));
    }
  }
  return fd;
}

Result<Fd> open_output_append(const std::filesystem::path& path, OutputTrust trust,
                              AppendAccess access, mode_t mode) {
  const auto name = path.filename();
  if (name.empty() || name == "." || name == "..") {
    return fail(Errc::invalid_argument, fmt::format("{}: not a file name", path.string()));
  }
  auto dir = open_output_dir(output_parent(path), trust);
  if (!dir) return tl::unexpected(for_file(path, dir.error()));
  // Look before opening: a device or FIFO is refused without the side effects of an open.
  struct stat pre {};
  if (::fstatat(dir->get(), name.c_str(), &pre, AT_SYMLINK_NOFOLLOW) == 0) {
    if (auto bad = check_output_file(path, pre)) return tl::unexpected(*bad);
  }
  const int rw = access == AppendAccess::read_write ? O_RDWR : O_WRONLY;
  Fd fd(::openat(dir->get(), name.c_str(),
                 rw | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode));
  if (!fd.valid()) {
    if (errno == ELOOP) {
      return tl::unexpected(refused(path, "a symlink; sparkops never writes through one"));
    }
    if (errno == ENXIO) return tl::unexpected(refused(path, "a FIFO, not a regular file"));
    return tl::unexpected(errno_error(errno, path, "open for appending"));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return tl::unexpected(errno_error(errno, path, "stat"));
  if (auto bad = check_output_file(path, st)) return tl::unexpected(*bad);
  if (auto st2 = clear_nonblock(fd.get(), path); !st2) return tl::unexpected(st2.error());
  return fd;
}

Result<Fd> open_existing_beneath(const std::filesystem::path& root, std::string_view relative) {
  Fd dir(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir.valid()) return tl::unexpected(errno_error(errno, root, "open the root"));
  std::vector<std::string_view> parts;
  for (auto part : split(relative, '/')) {
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      return fail(Errc::invalid_argument,
                  fmt::format("{}: '..' may not leave the root", std::string(relative)));
    }
    parts.push_back(part);
  }
  if (parts.empty()) return fail(Errc::invalid_argument, "open_existing_beneath: empty path");
  std::filesystem::path shown = root;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    shown /= std::string(parts[i]);
    Fd next(::openat(dir.get(), std::string(parts[i]).c_str(),
                     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next.valid()) {
      const int err = errno;
      struct stat lst {};
      if (::fstatat(dir.get(), std::string(parts[i]).c_str(), &lst, AT_SYMLINK_NOFOLLOW) == 0 &&
          S_ISLNK(lst.st_mode)) {
        return tl::unexpected(refused(shown, "a symlink inside the root; not followed"));
      }
      return tl::unexpected(errno_error(err, shown, "open"));
    }
    dir = std::move(next);
  }
  shown /= std::string(parts.back());
  const std::string last(parts.back());
  struct stat pre {};
  if (::fstatat(dir.get(), last.c_str(), &pre, AT_SYMLINK_NOFOLLOW) != 0) {
    return tl::unexpected(errno_error(errno, shown, "open for writing"));
  }
  if (auto bad = check_output_file(shown, pre)) return tl::unexpected(*bad);
  Fd fd(::openat(dir.get(), last.c_str(), O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) return tl::unexpected(errno_error(errno, shown, "open for writing"));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return tl::unexpected(errno_error(errno, shown, "stat"));
  if (auto bad = check_output_file(shown, st)) return tl::unexpected(*bad);
  if (auto st2 = clear_nonblock(fd.get(), shown); !st2) return tl::unexpected(st2.error());
  return fd;
}

}  // namespace sparkops
