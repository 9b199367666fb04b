// `sparkops top`: the live view. Options and one call into tui/; the collectors are status's.

#include <unistd.h>

#include <memory>
#include <string>

#include <fmt/format.h>

#include "base/units.hpp"
#include "cli/commands.hpp"
#include "options/domain_options.hpp"
#include "options/gpu_choice.hpp"
#include "sampling/sample_run.hpp"
#include "status/status_report.hpp"
#include "term/terminal.hpp"
#include "tui/frame_builder.hpp"
#include "tui/top_loop.hpp"

namespace sparkops::cli {

namespace {

struct TopFlags {
  std::string interval = "1s";
  bool once = false;
  std::size_t width = 0;
};

void run_top(const TopFlags& flags, AppContext& ctx) {
  // --json is global; top draws a terminal view and has no document: refuse rather than ignore.
  if (ctx.json) {
    print_error(ctx,
                "top --json: top draws a terminal view and has no JSON; `sparkops status --json` "
                "gives the same figures as one document");
    ctx.exit_code = kExitBadInput;
    return;
  }
  auto interval = parse_duration(flags.interval);
  if (!interval || *interval < std::chrono::milliseconds{100} ||
      *interval > std::chrono::hours{1}) {
    print_error(ctx, fmt::format("--interval: {}", interval ? "must be between 100ms and 1h"
                                                            : interval.error().detail));
    ctx.exit_code = kExitBadInput;
    return;
  }
  if (flags.once && flags.width != 0 && flags.width < 40) {
    print_error(ctx, "--width: at least 40 columns");
    ctx.exit_code = kExitBadInput;
    return;
  }
  if (!flags.once && !term::is_interactive()) {
    print_error(ctx,
                "top needs a terminal (stdin and stdout a tty, TERM set and not \"dumb\"); use "
                "`sparkops top --once` for one frame as text");
    ctx.exit_code = kExitBadInput;
    return;
  }
  auto source = options::status_source(ctx.host_root(), ctx.gpu.backend, ctx.config);
  if (!source) {
    print_error(ctx, source.error().detail);
    ctx.exit_code = kExitBadInput;
    return;
  }
  SystemClock clock;
  const tui::CollectFn collect = [&] {
    return status::collect_status(source->root, *source->gpu, clock, source->options);
  };

  tui::TrackerOptions tracker;
  tracker.thresholds.detector = sampling::detector_from_config(ctx.config);
  tui::ViewState view;
  view.interval = std::chrono::duration_cast<std::chrono::milliseconds>(*interval);
  const tui::Glyphs glyphs = term::locale_is_utf8() ? tui::Glyphs::unicode : tui::Glyphs::ascii;

  if (flags.once) {
    tui::FrameOptions fo;
    // The window's width, not COLUMNS: the frame is drawn for the terminal it is shown on.
    const auto window = term::window_size({STDOUT_FILENO});
    fo.columns = flags.width != 0 ? flags.width : window ? window->ws_col : tui::kMinColumns;
    fo.glyphs = glyphs;
    const auto once = tui::run_top_once(collect, clock, *interval, tracker, view, fo);
    fmt::print(ctx.out, "{}", tui::frame_to_text(once.frame, ctx.colour(ctx.out)));
    ctx.exit_code = once.pool_read ? kExitOk : kExitFailure;
    return;
  }

  tui::TopLoopOptions loop;
  loop.initial = view;
  loop.glyphs = glyphs;
  loop.tracker = tracker;
  loop.colour = ctx.colour(ctx.out) ? tui::ColourMode::colour : tui::ColourMode::monochrome;
  auto signaller = tui::make_system_signaller(source->root);
  if (auto ran = tui::run_top(loop, collect, *signaller, clock); !ran) {
    print_error(ctx, ran.error().detail);
    ctx.exit_code = kExitBadInput;
    return;
  }
  ctx.exit_code = kExitOk;
}

}  // namespace

void add_top_command(CommandTree& tree, AppContext& ctx) {
  auto* cmd = tree.add(
      "top",
      "Live view, refreshed every --interval: the pool (free now vs available, with history), the "
      "GPU (temperature, power against the ~100 W ceiling, clocks, throttle reasons and counter "
      "deltas), host thermals, memory pressure, workloads and recent events. Keys: q quit, ? help, "
      "m/c/a sort by memory/cap/age, Up/Down select, k SIGTERM the selected workload (asks "
      "first), f freeze, +/- interval. Needs a terminal; --once prints one frame as text");
  if (cmd == nullptr) return;
  auto flags = std::make_shared<TopFlags>();
  cmd->add_option("--interval", flags->interval,
                  "Time between refreshes, 100ms..1h (default 1s; + and - change it live)")
      ->type_name("DURATION");
  cmd->add_flag("--once", flags->once,
                "Print one frame as text and exit (two readings one interval apart, so counter "
                "deltas are real); works without a terminal");
  cmd->add_option("--width", flags->width,
                  "Columns of the --once frame (default: the terminal's, else 80)")
      ->type_name("N");
  cmd->callback([&ctx, flags] { run_top(*flags, ctx); });
}

}  // namespace sparkops::cli
