#include "cli/sample_signals.hpp"

#include <csignal>

#include <signal.h>

namespace sparkops::cli {

namespace {

// A signal handler can reach state only through something static; this pointer is set and cleared
// by ScopedSampleSignals and read by the handler (lock-free atomics are async-signal-safe).
std::atomic<SampleSignalFlags*> g_flags{nullptr};
struct sigaction g_previous[3];
constexpr int kSignals[3] = {SIGINT, SIGTERM, SIGHUP};

static_assert(std::atomic<bool>::is_always_lock_free);
static_assert(std::atomic<int>::is_always_lock_free);

void on_signal(int sig) {
  SampleSignalFlags* flags = g_flags.load();
  if (flags == nullptr) return;
  if (sig == SIGHUP) {
    flags->reopen.store(true);
    return;
  }
  flags->stop_signal.store(sig);
  flags->stop.store(true);
}

}  // namespace

ScopedSampleSignals::ScopedSampleSignals(SampleSignalFlags& flags) {
  g_flags.store(&flags);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: nanosleep returns EINTR and the loop re-checks its flags
  for (int i = 0; i < 3; ++i) ::sigaction(kSignals[i], &sa, &g_previous[i]);
}

ScopedSampleSignals::~ScopedSampleSignals() {
  for (int i = 0; i < 3; ++i) ::sigaction(kSignals[i], &g_previous[i], nullptr);
  g_flags.store(nullptr);
}

}  // namespace sparkops::cli
