#include <fmt/format.h>

#include "base/json_text.hpp"
#include "cli/commands.hpp"
#include "config/config_report.hpp"

namespace sparkops::cli {

void add_config_command(CommandTree& tree, AppContext& ctx) {
  auto* cmd = tree.add("config",
                       "Show every configuration value in effect and where it came from "
                       "(a bad file is shown beside the values, exit 2)");
  if (cmd == nullptr) return;
  cmd->callback([&ctx] {
    if (ctx.json) {
      fmt::print(ctx.out, "{}\n",
                 dump_document(config::config_document(ctx.config, ctx.config_problems)));
    } else {
      fmt::print(ctx.out, "{}", config::render_config_text(ctx.config));
    }
    // A file that did not load is left out whole (the values above do not include it); every
    // other command refuses to run until it is fixed.
    for (const auto& p : ctx.config_problems)
      print_error(ctx, config::config_not_applied(p.detail));
    if (!ctx.config_problems.empty()) ctx.exit_code = kExitBadInput;
  });
}

}  // namespace sparkops::cli
