#pragma once
// RemovalWatch: whether any of a set of files was unlinked, renamed or replaced since the last
// ask, for one read() however many files are watched (inotify). A regular file stays readable
// through an open descriptor after it is unlinked, so whoever re-reads held files of a captured
// root (host/host_probe.hpp) needs this to notice a removed sensor without one fstat per file per
// read; sysfs and /proc report a removed file through the read itself (base/held_file.hpp), so
// files there need no watch. Not thread-safe; movable, not copyable.

#include <filesystem>

namespace sparkops {

class RemovalWatch {
 public:
  // Without inotify (a kernel without it, the per-user instance limit reached) available() is
  // false and the caller falls back to HeldFile::unlinked().
  RemovalWatch();
  RemovalWatch(RemovalWatch&& other) noexcept;
  RemovalWatch& operator=(RemovalWatch&& other) noexcept;
  RemovalWatch(const RemovalWatch&) = delete;
  RemovalWatch& operator=(const RemovalWatch&) = delete;
  ~RemovalWatch();

  bool available() const { return fd_ >= 0; }
  // Watches `path` (the file itself, not its directory); false when it cannot be watched.
  bool add(const std::filesystem::path& path);
  // True once after any watched file lost a link (unlink, or a rename over it), was moved, or had
  // its attributes changed (a false alarm costs the caller a rediscovery, never a wrong value);
  // reading drains the events. No system call while nothing is watched.
  bool changed();

 private:
  int fd_ = -1;
  bool watching_ = false;
};

}  // namespace sparkops
