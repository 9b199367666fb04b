#pragma once
// One function per subcommand; each lives in its own cmd_<name>.cpp and registers itself on `app`.

#include <CLI/CLI.hpp>

#include "cli/app_context.hpp"

namespace sparkops::cli {

void add_status_command(CLI::App& app, AppContext& ctx);
void add_config_command(CLI::App& app, AppContext& ctx);
void add_serve_command(CLI::App& app, AppContext& ctx);
void add_sample_command(CLI::App& app, AppContext& ctx);
void add_plan_command(CLI::App& app, AppContext& ctx);
void add_procs_command(CLI::App& app, AppContext& ctx);
void add_analyze_command(CLI::App& app, AppContext& ctx);
void add_oom_command(CLI::App& app, AppContext& ctx);
void add_flush_command(CLI::App& app, AppContext& ctx);
void add_watch_command(CLI::App& app, AppContext& ctx);
void add_top_command(CLI::App& app, AppContext& ctx);
void add_help_command(CLI::App& app, AppContext& ctx);
void add_completion_command(CLI::App& app, AppContext& ctx);

}  // namespace sparkops::cli
