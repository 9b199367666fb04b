#pragma once
// One function per subcommand; each lives in its own cmd_<name>.cpp and registers itself on the
// tree: name and description always, options and callback when tree.add() returns the command
// (cli/command_tree.hpp).

#include <CLI/CLI.hpp>

#include "cli/app_context.hpp"
#include "cli/command_tree.hpp"

namespace sparkops::cli {

void add_status_command(CommandTree& tree, AppContext& ctx);
void add_config_command(CommandTree& tree, AppContext& ctx);
void add_serve_command(CommandTree& tree, AppContext& ctx);
void add_sample_command(CommandTree& tree, AppContext& ctx);
void add_plan_command(CommandTree& tree, AppContext& ctx);
void add_procs_command(CommandTree& tree, AppContext& ctx);
void add_analyze_command(CommandTree& tree, AppContext& ctx);
void add_oom_command(CommandTree& tree, AppContext& ctx);
void add_flush_command(CommandTree& tree, AppContext& ctx);
void add_watch_command(CommandTree& tree, AppContext& ctx);
void add_top_command(CommandTree& tree, AppContext& ctx);
void add_help_command(CommandTree& tree, AppContext& ctx);
void add_completion_command(CommandTree& tree, AppContext& ctx);

// All of the above, in the order `sparkops --help` lists them.
void add_commands(CommandTree& tree, AppContext& ctx);

}  // namespace sparkops::cli
