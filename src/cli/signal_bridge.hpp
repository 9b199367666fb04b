#pragma once
// The one place sparkops takes signals (docs/design.md §5: signals live only in cli/). A handler
// only stores into lock-free atomics that live in static storage (it reads no pointer), and is
// installed without SA_RESTART, so a poll() in progress returns EINTR and the loop re-reads its
// flags. Two ways in:
//  - `sample` and `serve` (SignalThread): their loops stop on a std::stop_token, and
//    request_stop is not async-signal-safe, so the signals are blocked in every thread and one
//    thread takes them with sigtimedwait and calls back on that thread (which may lock mutexes and
//    request a std::stop_source); no async handler runs at all. sample: SIGINT/SIGTERM stop,
//    SIGHUP reopens its files (logrotate); serve: SIGINT/SIGTERM stop.
//  - `watch` (WatchSignals): SIGINT, SIGTERM and SIGHUP are counted (the loop forwards the first to
//    the job's process group and kills the group on the second: not a stop); SIGCHLD only wakes
//    the loop; SIGWINCH marks a resize (the loop gives the job's ptys the new size); SIGPIPE is
//    ignored (a closed terminal must not kill the watcher while the job runs).
// One WatchSignals at a time per process (its flags are static).

#include <signal.h>

#include <atomic>
#include <functional>
#include <initializer_list>
#include <thread>

#include "watch/watch_session.hpp"

namespace sparkops::cli {

class WatchSignals {
 public:
  // Clears the flags and installs the handlers; the destructor restores the previous ones.
  WatchSignals();
  ~WatchSignals();
  WatchSignals(const WatchSignals&) = delete;
  WatchSignals& operator=(const WatchSignals&) = delete;
  watch::WatchSignalFlags& flags();
};

class SignalThread {
 public:
  // Blocks `signals` in the calling thread; threads created afterwards inherit the mask.
  // Construct before starting any other thread (the GPU watchdog's worker blocks every signal).
  explicit SignalThread(std::initializer_list<int> signals);
  // Stops the watcher and restores the previous mask.
  ~SignalThread();
  SignalThread(const SignalThread&) = delete;
  SignalThread& operator=(const SignalThread&) = delete;

  // Starts the watcher; `on_signal(signo)` runs on it for each of the signals received.
  void watch(std::function<void(int)> on_signal);

 private:
  sigset_t set_{};
  sigset_t previous_{};
  std::atomic<bool> done_{false};
  std::thread watcher_;
};

}  // namespace sparkops::cli
