#include "cli/stop_signals.hpp"

#include <pthread.h>

#include <ctime>

namespace sparkops::cli {

namespace {

sigset_t stop_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

}  // namespace

StopSignals::StopSignals() {
  const sigset_t set = stop_set();
  pthread_sigmask(SIG_BLOCK, &set, &previous_);
}

StopSignals::~StopSignals() {
  done_ = true;
  if (watcher_.joinable()) watcher_.join();
  pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

void StopSignals::watch(std::function<void(int)> on_signal) {
  watcher_ = std::thread([this, on_signal = std::move(on_signal)] {
    const sigset_t set = stop_set();
    // Poll in 200 ms slices so the destructor can end the thread without sending a signal.
    const timespec slice{0, 200'000'000};
    while (!done_) {
      const int signo = sigtimedwait(&set, nullptr, &slice);
      if (signo > 0) on_signal(signo);
    }
  });
}

void StopFlag::request() {
  {
    const std::lock_guard lock(mutex_);
    stop_ = true;
  }
  cond_.notify_all();
}

bool StopFlag::requested() const {
  const std::lock_guard lock(mutex_);
  return stop_;
}

bool StopFlag::wait_until(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  cond_.wait_until(lock, deadline, [this] { return stop_; });
  return !stop_;
}

}  // namespace sparkops::cli
