#pragma once
// Clock: the one seam for time. Samplers and detectors schedule on steady time and stamp with
// system (UTC) time; tests drive a ManualClock instead of sleeping.

#include <chrono>
#include <stop_token>

namespace sparkops {

using SteadyTime = std::chrono::steady_clock::time_point;
using SystemTime = std::chrono::system_clock::time_point;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual SteadyTime steady_now() const = 0;
  virtual SystemTime system_now() const = 0;
  // Blocks until `deadline` or until a stop is requested on `stop` (from any thread: a
  // std::stop_source::request_stop wakes the sleep at once). Returns true when the deadline was
  // reached, false when the stop came first (at once when it was already requested). A
  // default-constructed token never stops.
  virtual bool sleep_until(SteadyTime deadline, std::stop_token stop) = 0;
};

class SystemClock final : public Clock {
 public:
  SteadyTime steady_now() const override;
  SystemTime system_now() const override;
  bool sleep_until(SteadyTime deadline, std::stop_token stop) override;
};

// A clock that only moves when told. sleep_until jumps straight to the deadline, unless a stop was
// requested (tests request it from a tick or before the loop).
// Not thread-safe: one test thread drives it.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(SystemTime start_system = SystemTime{std::chrono::seconds{1762680372}});
  SteadyTime steady_now() const override { return steady_; }
  SystemTime system_now() const override { return system_; }
  bool sleep_until(SteadyTime deadline, std::stop_token stop) override;
  void advance(std::chrono::nanoseconds d);
  // Moves only the wall clock (an NTP step or a manual date change).
  void jump_system(std::chrono::nanoseconds d) {
    system_ += std::chrono::duration_cast<SystemTime::duration>(d);
  }

 private:
  SteadyTime steady_;
  SystemTime system_;
};

}  // namespace sparkops
