#include "tui/top_loop.hpp"

#include <algorithm>

#include "tui/frame_builder.hpp"
#include "tui/top_controller.hpp"

namespace sparkops::tui {

Status run_top(const TopLoopOptions& options, const CollectFn& collect, ProcessSignaller& signaller,
               const Clock& clock) {
  auto opened = TerminalView::open(options.colour);
  if (!opened) return tl::unexpected(opened.error());
  TerminalView& view = **opened;

  TopTracker tracker(options.tracker);
  TopController controller(options.initial, signaller);
  SteadyTime last_collect{};
  auto refresh = [&] {
    status::StatusReport report = collect();
    last_collect = clock.steady_now();
    tracker.observe(std::move(report), last_collect);
  };
  auto draw = [&] {
    FrameOptions fo;
    fo.columns = view.columns();
    fo.rows = view.rows();
    fo.glyphs = options.glyphs;
    view.draw(build_frame(tracker.model(), controller.view(), fo));
  };

  refresh();
  draw();
  for (;;) {
    std::optional<std::chrono::milliseconds> wait;  // frozen: until a key
    if (!controller.view().frozen) {
      const SteadyTime due = last_collect + controller.view().interval;
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(due - clock.steady_now());
      wait = std::max(left, std::chrono::milliseconds{0});
    }
    const auto key = view.read(wait);
    if (!key) {
      if (!controller.view().frozen &&
          clock.steady_now() >= last_collect + controller.view().interval) {
        refresh();
        draw();
      }
      continue;
    }
    switch (controller.on_input(*key, tracker.model())) {
      case Command::quit:
        return {};
      case Command::refresh_now:
        refresh();
        draw();
        break;
      case Command::redraw:
        draw();
        break;
      case Command::none:
        break;
    }
  }
}

TopOnce run_top_once(const CollectFn& collect, Clock& clock, std::chrono::nanoseconds interval,
                     const TrackerOptions& tracker, const ViewState& view, FrameOptions frame) {
  TopTracker t(tracker);
  t.observe(collect(), clock.steady_now());
  clock.sleep_until(clock.steady_now() + interval, std::stop_token{});
  t.observe(collect(), clock.steady_now());
  frame.rows = 1000;
  frame.mode = FrameMode::once;
  TopOnce out;
  out.frame = build_frame(t.model(), view, frame);
  out.pool_read = t.model().report.pool.has_value();
  return out;
}

}  // namespace sparkops::tui
