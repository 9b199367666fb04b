#include "cli/signal_bridge.hpp"

#include <pthread.h>

#include <array>
#include <ctime>

namespace sparkops::cli {

namespace {

static_assert(std::atomic<bool>::is_always_lock_free);
static_assert(std::atomic<int>::is_always_lock_free);

// What the handler writes: a static object, so the handler reaches it without reading a pointer.
watch::WatchSignalFlags g_watch;

extern "C" void on_watch_signal(int sig) {
  if (sig == SIGCHLD) {
    g_watch.child.store(true);
    return;
  }
  if (sig == SIGWINCH) {
    g_watch.winch.store(true);
    return;
  }
  g_watch.last_signal.store(sig);
  g_watch.stop_count.fetch_add(1);
}

constexpr std::array<int, 6> kWatchSignals{SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGPIPE, SIGWINCH};
std::array<struct sigaction, kWatchSignals.size()> g_watch_previous{};

// Installs `handler` for each of `signals` without SA_RESTART (SIGPIPE ignored, SIGCHLD without
// stop notifications), keeping what was there in `previous`.
template <std::size_t N>
void install(const std::array<int, N>& signals, void (*handler)(int),
             std::array<struct sigaction, N>& previous) {
  for (std::size_t i = 0; i < N; ++i) {
    struct sigaction sa {};
    sa.sa_handler = signals[i] == SIGPIPE ? SIG_IGN : handler;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = signals[i] == SIGCHLD ? SA_NOCLDSTOP : 0;
    ::sigaction(signals[i], &sa, &previous[i]);
  }
}

template <std::size_t N>
void restore(const std::array<int, N>& signals, const std::array<struct sigaction, N>& previous) {
  for (std::size_t i = 0; i < N; ++i) ::sigaction(signals[i], &previous[i], nullptr);
}

}  // namespace

WatchSignals::WatchSignals() {
  g_watch.stop_count.store(0);
  g_watch.last_signal.store(0);
  g_watch.child.store(false);
  g_watch.winch.store(false);
  install(kWatchSignals, on_watch_signal, g_watch_previous);
}

WatchSignals::~WatchSignals() {
  restore(kWatchSignals, g_watch_previous);
}

watch::WatchSignalFlags& WatchSignals::flags() {
  return g_watch;
}

SignalThread::SignalThread(std::initializer_list<int> signals) {
  sigemptyset(&set_);
  for (const int s : signals) sigaddset(&set_, s);
  pthread_sigmask(SIG_BLOCK, &set_, &previous_);
}

SignalThread::~SignalThread() {
  done_ = true;
  if (watcher_.joinable()) watcher_.join();
  pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

void SignalThread::watch(std::function<void(int)> on_signal) {
  watcher_ = std::thread([this, on_signal = std::move(on_signal)] {
    // Poll in 200 ms slices so the destructor can end the thread without sending a signal.
    const timespec slice{0, 200'000'000};
    while (!done_) {
      const int signo = sigtimedwait(&set_, nullptr, &slice);
      if (signo > 0) on_signal(signo);
    }
  });
}

}  // namespace sparkops::cli
