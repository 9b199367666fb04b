#include "base/removal_watch.hpp"

#include <cerrno>
#include <utility>

#include <sys/inotify.h>
#include <unistd.h>

namespace sparkops {

RemovalWatch::RemovalWatch() : fd_(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) {}

RemovalWatch::RemovalWatch(RemovalWatch&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), watching_(std::exchange(other.watching_, false)) {}

RemovalWatch& RemovalWatch::operator=(RemovalWatch&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    watching_ = std::exchange(other.watching_, false);
  }
  return *this;
}

RemovalWatch::~RemovalWatch() {
  if (fd_ >= 0) ::close(fd_);
}

bool RemovalWatch::add(const std::filesystem::path& path) {
  if (fd_ < 0) return false;
  // IN_ATTRIB carries the link-count change of an unlink and of a rename over the file;
  // IN_DELETE_SELF and IN_MOVE_SELF the inode's end and its move (inotify(7)).
  const int wd = ::inotify_add_watch(fd_, path.c_str(), IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF);
  if (wd < 0) return false;
  watching_ = true;
  return true;
}

bool RemovalWatch::changed() {
  if (fd_ < 0 || !watching_) return false;
  alignas(inotify_event) char events[4096];
  bool any = false;
  while (true) {
    const ssize_t n = ::read(fd_, events, sizeof events);
    if (n > 0) {
      any = true;
      continue;  // drain: more events may be queued
    }
    if (n < 0 && errno == EINTR) continue;
    return any;  // EAGAIN: nothing (more) queued
  }
}

}  // namespace sparkops
