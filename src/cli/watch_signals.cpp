#include "cli/watch_signals.hpp"

#include <signal.h>

#include <array>

namespace sparkops::cli {

namespace {

WatchSignalFlags* g_flags = nullptr;  // the one handler target (signal handlers take no argument)
constexpr std::array<int, 6> kSignals{SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGPIPE, SIGWINCH};
std::array<struct sigaction, kSignals.size()> g_previous{};

extern "C" void on_watch_signal(int sig) {
  if (g_flags == nullptr) return;
  if (sig == SIGCHLD) {
    g_flags->child.store(true);
    return;
  }
  if (sig == SIGWINCH) {
    g_flags->winch.store(true);
    return;
  }
  g_flags->last_signal.store(sig);
  g_flags->stop_count.fetch_add(1);
}

}  // namespace

ScopedWatchSignals::ScopedWatchSignals(WatchSignalFlags& flags) {
  g_flags = &flags;
  for (std::size_t i = 0; i < kSignals.size(); ++i) {
    struct sigaction sa {};
    sa.sa_handler = kSignals[i] == SIGPIPE ? SIG_IGN : on_watch_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = kSignals[i] == SIGCHLD ? SA_NOCLDSTOP : 0;
    ::sigaction(kSignals[i], &sa, &g_previous[i]);
  }
}

ScopedWatchSignals::~ScopedWatchSignals() {
  for (std::size_t i = 0; i < kSignals.size(); ++i)
    ::sigaction(kSignals[i], &g_previous[i], nullptr);
  g_flags = nullptr;
}

}  // namespace sparkops::cli
