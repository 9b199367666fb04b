#pragma once
// SIGINT/SIGTERM for long-running commands (serve): the signals are blocked in every thread and one
// watcher thread takes them with sigtimedwait, then calls a callback on that thread. No
// async-signal handler runs, so the callback may lock mutexes and stop servers.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <functional>
#include <mutex>
#include <thread>

namespace sparkops::cli {

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

// A stop request shared by the serve loop and the watcher: wait_until() sleeps on a condition
// variable, so a stop wakes the loop at once.
class StopFlag {
 public:
  void request();
  bool requested() const;
  // False when stopped (before or during the wait), true when the deadline passed.
  bool wait_until(std::chrono::steady_clock::time_point deadline);

 private:
  mutable std::mutex mutex_;
  std::condition_variable cond_;
  bool stop_ = false;
};

}  // namespace sparkops::cli
