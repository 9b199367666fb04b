#pragma once
// The options every command takes, before or after the subcommand (`sparkops --root DIR status`
// and `sparkops status --root DIR --json` mean the same): --root, --json, --quiet, --gpu,
// --no-color, --config. They are added to the app and to every subcommand, bound to the same
// AppContext fields, so each subcommand's --help lists them under "Global options".

#include <string_view>

#include <CLI/CLI.hpp>

#include "cli/app_context.hpp"

namespace sparkops::cli {

inline constexpr const char* kGlobalGroup = "Global options (before or after the command)";

void add_global_options(CLI::App& cmd, AppContext& ctx);

// After parsing, before the command runs: checks SPARKOPS_ROOT as --root is checked and loads the
// configuration (system, user, SPARKOPS_CONFIG, then --config). A bad layer is an error (printed,
// exit 2) except for `sparkops config`, which runs with the layers that loaded and shows the
// problem (ctx.config_problems). Commands that read no configuration (help, completion) skip it.
// Returns the exit code to stop with, or kExitOk to go on.
int finish_global_options(AppContext& ctx, std::string_view command);

}  // namespace sparkops::cli
