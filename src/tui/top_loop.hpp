#pragma once
// The interactive loop of `sparkops top`: collect, track, draw, wait for a key or the next
// refresh. Collection goes through the caller's function (cli/ passes collect_status over its
// HostRoot and GpuSource), so `top` reads exactly what `status` reads.

#include <functional>

#include "base/clock.hpp"
#include "base/result.hpp"
#include "tui/frame.hpp"
#include "tui/frame_builder.hpp"
#include "tui/signaller.hpp"
#include "tui/terminal_view.hpp"
#include "tui/top_tracker.hpp"

namespace sparkops::tui {

using CollectFn = std::function<status::StatusReport()>;

struct TopLoopOptions {
  ViewState initial;  // interval from --interval
  Glyphs glyphs = Glyphs::unicode;
  ColourMode colour = ColourMode::colour;
  TrackerOptions tracker;
};

// Runs until `q`. The terminal is restored on return. An Error only when ncurses cannot start.
Status run_top(const TopLoopOptions& options, const CollectFn& collect, ProcessSignaller& signaller,
               const Clock& clock);

// `top --once`: two readings one interval apart on `clock` (so counter deltas and rates are
// real), then one frame of everything (`frame.rows` is ignored: a pipe has no height).
struct TopOnce {
  Frame frame;
  bool pool_read = false;  // the report has a pool: the exit code says whether it does
};
TopOnce run_top_once(const CollectFn& collect, Clock& clock, std::chrono::nanoseconds interval,
                     const TrackerOptions& tracker, const ViewState& view, FrameOptions frame);

}  // namespace sparkops::tui
