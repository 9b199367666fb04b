#include <cstdlib>

#include <fmt/format.h>

#include "base/json_text.hpp"
#include "base/units.hpp"
#include "base/utf8.hpp"
#include "cli/commands.hpp"
#include "options/domain_options.hpp"
#include "options/gpu_choice.hpp"
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
  const auto bad = [&](std::string_view message) {
    print_error(ctx, message);
    ctx.exit_code = kExitBadInput;
  };
  if (!flags.overhead.empty()) {
    if (auto v = parse_bytes(flags.overhead, DefaultUnit::gib); !v)
      return bad(fmt::format("--overhead: {}", v.error().detail));
    if (auto st = ctx.config.set_from_flag("pool.overhead", flags.overhead, "--overhead"); !st)
      return bad(st.error().detail);
  }
  auto source = options::status_source(ctx.host_root(), ctx.gpu.backend, ctx.config);
  if (!source) return bad(source.error().detail);
  const status::StatusReport report =
      status::collect_status(source->root, *source->gpu, SystemClock(), source->options);
  if (ctx.json) {
    fmt::print(ctx.out, "{}\n", dump_document(status::status_to_json(report)));
  } else {
    fmt::print(
        ctx.out, "{}",
        term::paint_lines(terminal_text(status::render_status(report, term::output_width(ctx.out))),
                          ctx.colour(ctx.out)));
  }
  // Exit 0 when the machine could be read; the pool is the one figure status cannot do without.
  ctx.exit_code = report.pool ? kExitOk : kExitFailure;
}

}  // namespace

void add_status_command(CommandTree& tree, AppContext& ctx) {
  auto* cmd = tree.add(
      "status",
      "One screen: the pool (free now, available, reclaimable, budget), the GPU, thermals, "
      "pressure and what else is running");
  if (cmd == nullptr) return;
  auto flags = std::make_shared<StatusFlags>();
  cmd->add_option("--overhead", flags->overhead,
                  "OS/driver overhead subtracted from available to make the budget (default 4GiB; "
                  "config pool.overhead)")
      ->type_name("SIZE");
  cmd->callback([&ctx, flags] { run_status(*flags, ctx); });
}

}  // namespace sparkops::cli
