#include <cstdlib>

#include <fmt/format.h>

#include "base/json_text.hpp"
#include "base/units.hpp"
#include "base/utf8.hpp"
#include "cli/commands.hpp"
#include "cli/common_options.hpp"
#include "status/status_json.hpp"
#include "status/status_render.hpp"
#include "status/status_report.hpp"
#include "term/colour.hpp"
#include "term/terminal.hpp"

namespace sparkops::cli {

namespace {

struct StatusFlags {
  std::string overhead;
};

void run_status(const StatusFlags& flags, AppContext& ctx) {
  if (!flags.overhead.empty()) {
    if (auto v = parse_bytes(flags.overhead, DefaultUnit::gib); !v) {
      print_error(ctx, fmt::format("--overhead: {}", v.error().detail));
      ctx.exit_code = kExitBadInput;
      return;
    }
    if (auto st = ctx.config.set_from_flag("pool.overhead", flags.overhead, "--overhead"); !st) {
      print_error(ctx, st.error().detail);
      ctx.exit_code = kExitBadInput;
      return;
    }
  }
  auto gpu = open_gpu_for(ctx);
  if (!gpu) {
    print_error(ctx, gpu.error().detail);
    ctx.exit_code = kExitBadInput;
    return;
  }
  const HostRoot root = ctx.host_root();
  const StatusOptions options = status_options_for(root, ctx.config);
  SystemClock clock;
  const StatusReport report = collect_status(root, **gpu, clock, options);
  if (ctx.json) {
    fmt::print(ctx.out, "{}\n", dump_document(status_to_json(report)));
  } else {
    fmt::print(ctx.out, "{}",
               term::paint_lines(terminal_text(render_status(report, term::output_width(ctx.out))),
                                 ctx.colour(ctx.out)));
  }
  // Exit 0 when the machine could be read; the pool is the one figure status cannot do without.
  ctx.exit_code = report.pool ? kExitOk : kExitFailure;
}

}  // namespace

void add_status_command(CLI::App& app, AppContext& ctx) {
  auto* cmd = app.add_subcommand(
      "status",
      "One screen: the pool (free now, available, reclaimable, budget), the GPU, thermals, "
      "pressure and what else is running");
  auto flags = std::make_shared<StatusFlags>();
  cmd->add_option("--overhead", flags->overhead,
                  "OS/driver overhead subtracted from available to make the budget (default 4GiB; "
                  "config pool.overhead)")
      ->type_name("SIZE");
  cmd->callback([&ctx, flags] { run_status(*flags, ctx); });
}

}  // namespace sparkops::cli
