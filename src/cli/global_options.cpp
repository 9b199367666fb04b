#include "cli/global_options.hpp"

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "base/text.hpp"

namespace sparkops::cli {

void add_global_options(CLI::App& cmd, AppContext& ctx) {
  cmd.add_option("--root", ctx.root_flag,
                 "Read /proc, /sys and /dev under DIR instead of / (also SPARKOPS_ROOT)")
      ->check(
          CLI::ExistingDirectory)  // a mistyped root is bad input (exit 2), not an empty machine
      ->type_name("DIR")
      ->group(kGlobalGroup);
  cmd.add_flag("--json", ctx.json,
               "Print the command's JSON document instead of text (schemas: docs/json.md)")
      ->group(kGlobalGroup);
  cmd.add_flag("--quiet", ctx.quiet,
               "No progress line on stderr during long reads (it is drawn only on a terminal)")
      ->group(kGlobalGroup);
  cmd.add_option("--gpu", ctx.gpu.backend,
                 "GPU source: auto (NVML, then nvidia-smi), nvml, nvidia-smi or none (also "
                 "SPARKOPS_GPU_BACKEND; default auto)")
      ->check(CLI::IsMember({"auto", "nvml", "nvidia-smi", "none"}))
      ->type_name("SOURCE")
      ->group(kGlobalGroup);
  cmd.add_flag_function(
         "--trust-output-path", [&ctx](std::int64_t) { ctx.output_trust = OutputTrust::trusted; },
         "Write output files even through a symlinked directory or into a directory other users "
         "can write to (refused by default: see docs/reliability.md)")
      ->group(kGlobalGroup);
  cmd.add_flag("--no-color", ctx.no_color,
               "No colour even on a terminal (colour is also off for pipes and with NO_COLOR set)")
      ->group(kGlobalGroup);
  cmd.add_option("--config", ctx.config_file,
                 "Read this configuration file after the others (as SPARKOPS_CONFIG; the flag "
                 "wins over the variable)")
      ->type_name("FILE")
      ->group(kGlobalGroup);
}

int finish_global_options(AppContext& ctx, std::string_view command) {
  if (ctx.root_flag.empty()) {
    if (const char* env = std::getenv("SPARKOPS_ROOT"); env != nullptr && *env != '\0') {
      std::error_code ec;
      if (!std::filesystem::is_directory(env, ec)) {
        print_error(ctx, fmt::format("SPARKOPS_ROOT {}: not a directory", quote_for_message(env)));
        return kExitBadInput;
      }
    }
  }
  if (command == "help" || command == "completion") return kExitOk;
  config::ConfigPaths paths = config::config_paths_from_environment();
  if (!ctx.config_file.empty()) paths.explicit_file = ctx.config_file;
  ctx.config_problems.clear();
  ctx.config = config::load_config_layers(paths, ctx.config_problems);
  if (ctx.config_problems.empty() || command == "config") return kExitOk;
  print_error(ctx, ctx.config_problems.front().detail);
  return kExitBadInput;
}

}  // namespace sparkops::cli
