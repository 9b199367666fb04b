#pragma once
// Signal handling for `sparkops watch` (docs/design.md §5: signals live only in cli/). SIGINT,
// SIGTERM and SIGHUP are counted (the loop forwards the first to the job's process group and kills
// the group on the second); SIGCHLD only wakes the loop; SIGWINCH marks a resize (the loop gives
// the job's ptys the new size); SIGPIPE is ignored (a closed terminal must
// not kill the watcher while the job runs). Handlers only store into atomics and are installed
// without SA_RESTART, so a poll() in progress returns at once.

#include "watch/watch_session.hpp"

namespace sparkops::cli {

// Installs the handlers for the lifetime of the object and restores the previous ones after.
// One at a time per process (the handlers reach the flags through one file-local pointer).
class ScopedWatchSignals {
 public:
  explicit ScopedWatchSignals(WatchSignalFlags& flags);
  ~ScopedWatchSignals();
  ScopedWatchSignals(const ScopedWatchSignals&) = delete;
  ScopedWatchSignals& operator=(const ScopedWatchSignals&) = delete;
};

}  // namespace sparkops::cli
