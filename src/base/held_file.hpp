#pragma once
// HeldFile: a file opened once and re-read from offset 0 on demand, for the sampler's per-tick
// reads of /proc and /sys files. sysfs attributes and seq_file /proc files regenerate their content
// on a read at offset 0, so one pread() per tick replaces open+read+read+close. A read shorter than
// the buffer is taken as end of file (true for sysfs attributes and seq_file, which fill the buffer
// until their last record). A reread is that one pread() and nothing else: a removed sysfs
// attribute or /proc file fails it (kernfs answers ENODEV once the attribute is removed, a /proc/PID
// file ESRCH once its process is gone), while a regular file (a captured root) stays readable
// through the descriptor after it is unlinked; whoever holds regular files asks unlinked(), or
// watches them (base/removal_watch.hpp). Not thread-safe; movable, not copyable.

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include "base/result.hpp"

namespace sparkops {

class HeldFile {
 public:
  // Opens `path` read-only without blocking. Errors as read_file(): not_found, permission_denied,
  // io; anything but a regular file (a FIFO in a captured root) is invalid_argument.
  static Result<HeldFile> open(const std::filesystem::path& path,
                               std::size_t max_bytes = 256 * 1024);

  HeldFile(HeldFile&& other) noexcept;
  HeldFile& operator=(HeldFile&& other) noexcept;
  HeldFile(const HeldFile&) = delete;
  HeldFile& operator=(const HeldFile&) = delete;
  ~HeldFile();

  // The whole current content. The view stays valid until the next reread() or destruction.
  // A file that is gone (ENOENT, ENODEV, ENXIO, ESRCH, ESTALE: a removed sysfs attribute, a
  // hot-unplugged device, an exited process, a stale network handle) is not_found; any other
  // failed read (EIO after a driver unload) is io; more than max_bytes is too_large.
  Result<std::string_view> reread();

  // Whether the file has been unlinked since it was opened (one fstat). Only a regular filesystem
  // needs this; see the header comment.
  bool unlinked() const;

  const std::filesystem::path& path() const { return path_; }

 private:
  HeldFile(int fd, std::filesystem::path path, std::size_t max_bytes);
  int fd_ = -1;
  std::filesystem::path path_;
  std::size_t max_bytes_ = 0;
  std::string buffer_;
};

}  // namespace sparkops
