#pragma once
// The one place sparkops takes signals (docs/design.md §5: signals live only in cli/). A handler
// only stores into lock-free atomics that live in static storage (it reads no pointer), and is
// installed without SA_RESTART, so a sleep or poll() in progress returns EINTR and the loop
// re-reads its flags. Three sessions, three ways in:
//  - `sample` (SampleSignals): SIGINT/SIGTERM stop the loop, SIGHUP reopens its files (logrotate).
//  - `watch` (WatchSignals): SIGINT, SIGTERM and SIGHUP are counted (the loop forwards the first to
//    the job's process group and kills the group on the second); SIGCHLD only wakes the loop;
//    SIGWINCH marks a resize (the loop gives the job's ptys the new size); SIGPIPE is ignored (a
//    closed terminal must not kill the watcher while the job runs).
//  - `serve` (StopSignals): threads run, so SIGINT/SIGTERM are blocked in every thread and one
//    watcher thread takes them with sigtimedwait and calls back on that thread (which may lock
//    mutexes and request a std::stop_source); no async handler runs at all.
// One of SampleSignals / WatchSignals at a time per process (their flags are static).

#include <signal.h>

#include <atomic>
#include <functional>
#include <thread>

#include "sampling/sample_run.hpp"
#include "watch/watch_session.hpp"

namespace sparkops::cli {

class SampleSignals {
 public:
  // Clears the flags and installs the handlers; the destructor restores the previous ones.
  SampleSignals();
  ~SampleSignals();
  SampleSignals(const SampleSignals&) = delete;
  SampleSignals& operator=(const SampleSignals&) = delete;
  SampleSignalFlags& flags();
};

class WatchSignals {
 public:
  WatchSignals();
  ~WatchSignals();
  WatchSignals(const WatchSignals&) = delete;
  WatchSignals& operator=(const WatchSignals&) = delete;
  WatchSignalFlags& flags();
};

class StopSignals {
 public:
  // Blocks SIGINT and SIGTERM in the calling thread; threads created afterwards inherit the mask.
  // Construct before starting any other thread.
  StopSignals();
  // Stops the watcher and restores the previous mask.
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // Starts the watcher; `on_signal(signo)` runs on it for each SIGINT/SIGTERM received.
  void watch(std::function<void(int)> on_signal);

 private:
  sigset_t previous_{};
  std::atomic<bool> done_{false};
  std::thread watcher_;
};

}  // namespace sparkops::cli
