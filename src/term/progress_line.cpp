#include "term/progress_line.hpp"

#include <fmt/format.h>

#include "base/checked_cast.hpp"
#include "base/table.hpp"
#include "base/units.hpp"
#include "base/utf8.hpp"
#include "term/terminal.hpp"

namespace sparkops::term {

namespace {

// Clear to the end of the line (ECMA-48 EL 0): a shorter redraw leaves no tail of the last one.
constexpr std::string_view kClearLine = "\x1b[K";

}  // namespace

ProgressLine::ProgressLine(std::FILE* stream, bool enabled, std::string label,
                           std::optional<std::uint64_t> total, const Clock& clock)
    : stream_(stream),
      enabled_(enabled),
      label_(terminal_text(label)),
      total_(total),
      clock_(clock),
      started_(clock.steady_now()) {}

ProgressLine::ProgressLine(std::FILE* stream, bool enabled, std::string label,
                           std::optional<std::uint64_t> total)
    : stream_(stream),
      enabled_(enabled),
      label_(terminal_text(label)),
      total_(total),
      clock_(system_clock_),
      started_(system_clock_.steady_now()) {}

ProgressLine::~ProgressLine() {
  finish();
}

std::string ProgressLine::text(std::uint64_t done, std::chrono::nanoseconds elapsed) const {
  std::string line = fmt::format("{}: {}", label_, format_bytes(done));
  if (total_ && *total_ > 0) {
    const std::uint64_t shown = std::min(done, *total_);
    line += fmt::format(" of {} ({}%)", format_bytes(*total_), shown * 100 / *total_);
  }
  const double seconds = std::chrono::duration<double>(elapsed).count();
  // A rate needs time to mean something; the first draw has none.
  if (seconds >= 0.05 && done > 0) {
    const double rate = static_cast<double>(done) / seconds;
    line += fmt::format(", {}/s", format_bytes(saturating_round<std::uint64_t>(rate)));
    if (total_ && *total_ > done) {
      // A stalled read gives a tiny rate and an ETA past what nanoseconds hold: saturate, never
      // convert an out-of-range double (undefined behaviour).
      const double left_ns = static_cast<double>(*total_ - done) / rate * 1e9;
      line += fmt::format(
          ", {} left",
          format_duration(std::chrono::nanoseconds{saturating_round<std::int64_t>(left_ns)}));
    }
  }
  return line;
}

void ProgressLine::update(std::uint64_t done) {
  if (!enabled_) return;
  const SteadyTime now = clock_.steady_now();
  if (last_draw_ && now - *last_draw_ < kProgressInterval) return;
  last_draw_ = now;
  std::string line = text(done, now - started_);
  // One line, never wrapped: a wrapped line cannot be redrawn with '\r'.
  if (const auto width = output_width(stream_); width && *width > 1) {
    line = elide_middle(line, *width - 1);
  }
  fmt::print(stream_, "\r{}{}", line, kClearLine);
  std::fflush(stream_);
  drawn_ = true;
}

void ProgressLine::finish() {
  if (!drawn_) return;
  fmt::print(stream_, "\r{}", kClearLine);
  std::fflush(stream_);
  drawn_ = false;
}

ByteProgress ProgressLine::callback() {
  return [this](std::uint64_t done) { update(done); };
}

}  // namespace sparkops::term
