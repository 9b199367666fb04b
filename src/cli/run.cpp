#include "cli/run.hpp"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "base/version.hpp"
#include "cli/app_context.hpp"
#include "cli/commands.hpp"

namespace sparkops::cli {

int run(int argc, char** argv) {
  AppContext ctx;
  auto config = load_config(config_paths_from_environment());
  if (!config) {
    print_error(ctx, config.error().detail);
    return kExitBadInput;
  }
  ctx.config = std::move(*config);

  CLI::App app{
      "sparkops: memory, thermal and workload truth for unified-memory GPU machines (DGX Spark / "
      "GB10 first).\nRun `sparkops status` for the one-screen answer.",
      "sparkops"};
  app.set_version_flag("--version", std::string(kVersion));
  app.option_defaults()->always_capture_default();
  app.add_option("--root", ctx.root_flag,
                 "Read /proc, /sys and /dev under DIR instead of / (also SPARKOPS_ROOT)")
      ->envname("SPARKOPS_ROOT")
      ->check(
          CLI::ExistingDirectory)  // a mistyped root is bad input (exit 2), not an empty machine
      ->type_name("DIR");
  app.add_flag_function(
      "--trust-output-path", [&ctx](std::int64_t) { ctx.output_trust = OutputTrust::trusted; },
      "Write output files even through a symlinked directory or into a directory other users can "
      "write to (refused by default: see docs/reliability.md)");
  app.add_flag("--no-color", ctx.no_color,
               "No colour even on a terminal (also off for pipes and when NO_COLOR is set)");
  app.require_subcommand(1);

  add_status_command(app, ctx);
  add_config_command(app, ctx);
  add_serve_command(app, ctx);
  add_sample_command(app, ctx);
  add_plan_command(app, ctx);
  add_procs_command(app, ctx);
  add_analyze_command(app, ctx);
  add_oom_command(app, ctx);
  add_flush_command(app, ctx);
  add_watch_command(app, ctx);
  add_top_command(app, ctx);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // CLI11 reports a mistyped subcommand as "A subcommand is required"; name the word instead.
    const auto* first = argc > 1 ? argv[1] : nullptr;
    if (app.get_subcommands().empty() && first != nullptr && first[0] != '-') {
      print_error(ctx, fmt::format("unknown subcommand '{}' (see `sparkops --help`)", first));
    } else {
      print_error(ctx, fmt::format("{} (see `sparkops --help`)", e.what()));
    }
    return kExitBadInput;
  }
  return ctx.exit_code;
}

}  // namespace sparkops::cli
