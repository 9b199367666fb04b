#include "cli/run.hpp"

#include <memory>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "base/version.hpp"
#include "cli/app_context.hpp"
#include "cli/command_tree.hpp"
#include "cli/commands.hpp"
#include "cli/global_options.hpp"
#include "cli/help_format.hpp"

namespace sparkops::cli {

void add_commands(CommandTree& tree, AppContext& ctx) {
  add_status_command(tree, ctx);
  add_config_command(tree, ctx);
  add_serve_command(tree, ctx);
  add_sample_command(tree, ctx);
  add_plan_command(tree, ctx);
  add_procs_command(tree, ctx);
  add_analyze_command(tree, ctx);
  add_oom_command(tree, ctx);
  add_flush_command(tree, ctx);
  add_watch_command(tree, ctx);
  add_top_command(tree, ctx);
  add_help_command(tree, ctx);
  add_completion_command(tree, ctx);
}

int run(int argc, char** argv) {
  AppContext ctx;
  CLI::App app{
      "sparkops: memory, thermal and workload truth for unified-memory GPU machines (DGX Spark / "
      "GB10 first).\nRun `sparkops status` for the one-screen answer.",
      "sparkops"};
  // Set before the subcommands are added: they inherit the formatter and the option defaults.
  app.formatter(std::make_shared<HelpFormatter>());
  app.set_version_flag("--version", std::string(kVersion));
  app.option_defaults()->always_capture_default();
  add_global_options(app, ctx);
  app.require_subcommand(1);

  // The command's own options only (cli/command_tree.hpp); help and completion describe them all.
  const std::string word = command_in_argv(app, argc, argv);
  CommandTree tree(app, word == "help" || word == "completion" ? std::string() : word);
  add_commands(tree, ctx);
  if (tree.built().empty()) {  // the word names no command: leave every case to CLI11
    tree.build_every_command();
    add_commands(tree, ctx);
  }
  for (CLI::App* sub : tree.built()) add_global_options(*sub, ctx);
  add_examples(app);

  // Runs after parsing and --help/--version, before the command: the configuration is loaded only
  // for a command that runs, so a typo in a config file never blocks --help or --version.
  app.parse_complete_callback([&] {
    const auto subs = app.get_subcommands();
    const std::string name = subs.empty() ? std::string() : subs.front()->get_name();
    if (const int code = finish_global_options(ctx, name); code != kExitOk) {
      throw CLI::RuntimeError(code);
    }
  });

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();  // finish_global_options printed the reason
  } catch (const CLI::ParseError& e) {
    // CLI11 reports a mistyped subcommand as "A subcommand is required"; name the word instead
    // (also after global options: `sparkops --json stauts`).
    if (app.get_subcommands().empty() && !word.empty()) {
      print_error(ctx, fmt::format("unknown subcommand '{}' (see `sparkops help`)", word));
    } else {
      print_error(ctx, fmt::format("{} (see `sparkops help`)", e.what()));
    }
    return kExitBadInput;
  }
  return ctx.exit_code;
}

}  // namespace sparkops::cli
