#pragma once
// The one progress reporter of every long command (analyze, oom, a Hub fetch): a single line on
// stderr, "LABEL: 1.2 GiB of 3.0 GiB (40%), 95.1 MiB/s, 19s left", redrawn in place with '\r' at
// most every 100 ms (10 Hz: faster is flicker, and each redraw is a write), and cleared when the
// work ends. Commands enable it only when stderr is a terminal and --quiet was not given: a pipe,
// a file or a CI log gets nothing, so output stays byte-identical to a run without it.

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "base/clock.hpp"
#include "base/progress.hpp"

namespace sparkops::term {

inline constexpr std::chrono::milliseconds kProgressInterval{100};

class ProgressLine {
 public:
  // total: the bytes the work will read when known (a file's size), for the share and the ETA.
  ProgressLine(std::FILE* stream, bool enabled, std::string label,
               std::optional<std::uint64_t> total, const Clock& clock);
  // The same on the system clock.
  ProgressLine(std::FILE* stream, bool enabled, std::string label,
               std::optional<std::uint64_t> total);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // Bytes done so far. The first call draws; later ones redraw when kProgressInterval has passed.
  void update(std::uint64_t bytes_done);
  // Clears the line (once; the destructor calls it too).
  void finish();
  // update() as a callback for a reader; valid while this object lives.
  ByteProgress callback();

  bool enabled() const { return enabled_; }
  // The text of a line at `bytes_done` after `elapsed` (pure: tests pin the format with it).
  std::string text(std::uint64_t bytes_done, std::chrono::nanoseconds elapsed) const;

 private:
  std::FILE* stream_;
  bool enabled_;
  std::string label_;
  std::optional<std::uint64_t> total_;
  const Clock& clock_;
  SystemClock system_clock_;
  SteadyTime started_;
  std::optional<SteadyTime> last_draw_;
  bool drawn_ = false;
};

}  // namespace sparkops::term
