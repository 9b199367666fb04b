#pragma once
// The interactive loop of `sparkops top`: collect, track, draw, wait for a key or the next
// refresh. Collection goes through the caller's function (cli/ passes collect_status over its
// HostRoot and GpuSource), so `top` reads exactly what `status` reads.

#include <functional>

#include "base/clock.hpp"
#include "base/result.hpp"
#include "tui/frame.hpp"
#include "tui/signaller.hpp"
#include "tui/terminal_view.hpp"
#include "tui/top_tracker.hpp"

namespace sparkops::tui {

using CollectFn = std::function<StatusReport()>;

struct TopLoopOptions {
  ViewState initial;  // interval from --interval
  Glyphs glyphs = Glyphs::unicode;
  ColourMode colour = ColourMode::colour;
  TrackerOptions tracker;
};

// Runs until `q`. The terminal is restored on return. An Error only when ncurses cannot start.
Status run_top(const TopLoopOptions& options, const CollectFn& collect, ProcessSignaller& signaller,
               const Clock& clock);

}  // namespace sparkops::tui
