#include "base/clock.hpp"

#include <cerrno>
#include <ctime>

namespace sparkops {

SteadyTime SystemClock::steady_now() const {
  return std::chrono::steady_clock::now();
}
SystemTime SystemClock::system_now() const {
  return std::chrono::system_clock::now();
}

bool SystemClock::sleep_until(SteadyTime deadline) {
  const auto now = std::chrono::steady_clock::now();
  if (deadline <= now) return true;
  const auto wait = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - now);
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(wait.count() / 1'000'000'000);
  ts.tv_nsec = static_cast<long>(wait.count() % 1'000'000'000);
  // nanosleep returns -1/EINTR when a signal arrives: the caller's stop flag decides what next.
  return ::nanosleep(&ts, nullptr) == 0;
}

ManualClock::ManualClock(SystemTime start_system)
    : steady_(std::chrono::hours{1}), system_(start_system) {}

bool ManualClock::sleep_until(SteadyTime deadline) {
  if (deadline > steady_) advance(deadline - steady_);
  return true;
}

void ManualClock::advance(std::chrono::nanoseconds d) {
  steady_ += d;
  system_ += std::chrono::duration_cast<SystemTime::duration>(d);
}

}  // namespace sparkops
