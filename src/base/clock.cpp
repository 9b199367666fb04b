#include "base/clock.hpp"

#include <condition_variable>
#include <mutex>

namespace sparkops {

SteadyTime SystemClock::steady_now() const {
  return std::chrono::steady_clock::now();
}
SystemTime SystemClock::system_now() const {
  return std::chrono::system_clock::now();
}

bool SystemClock::sleep_until(SteadyTime deadline, std::stop_token stop) {
  // condition_variable_any's stop_token wait registers a stop_callback that notifies it, so a
  // request_stop on any thread ends the wait; the predicate is only "stopped", so spurious
  // wake-ups sleep on until the deadline.
  std::mutex mutex;
  std::condition_variable_any wake;
  std::unique_lock lock(mutex);
  (void)wake.wait_until(lock, stop, deadline, [] { return false; });
  return !stop.stop_requested();
}

ManualClock::ManualClock(SystemTime start_system)
    : steady_(std::chrono::hours{1}), system_(start_system) {}

bool ManualClock::sleep_until(SteadyTime deadline, std::stop_token stop) {
  if (stop.stop_requested()) return false;
  if (deadline > steady_) advance(deadline - steady_);
  return true;
}

void ManualClock::advance(std::chrono::nanoseconds d) {
  steady_ += d;
  system_ += std::chrono::duration_cast<SystemTime::duration>(d);
}

}  // namespace sparkops
