#pragma once
// The subcommand tree as CLI11 parses it, built for one run. Every command is registered by name
// and description, so `sparkops --help`, an unknown or misplaced command word and CLI11's own
// checks see the whole tree; only the command being run gets its options and callback. Building
// every command's options costs more than most commands' own work (CLI11 checks each new option
// against all the command's earlier ones: plan's flags alone were a quarter of `status`'s
// instructions, docs/benchmarks.md), so a run pays for its own command only. `help` and
// `completion` describe every command: they get the whole tree.

#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

namespace sparkops::cli {

class CommandTree {
 public:
  // options_for: the one command whose options are built; empty builds every command's.
  CommandTree(CLI::App& app, std::string options_for);

  CLI::App& app() const { return app_; }

  // Adds subcommand NAME. Returns it when its options are to be added, else nullptr (the command
  // is then there by name and description only, and is never the one parsed).
  CLI::App* add(const char* name, const char* description);

  // The subcommands add() returned, in order: each also gets the global options.
  const std::vector<CLI::App*>& built() const { return built_; }

  // Removes every subcommand so that adding them again builds each one's options.
  void build_every_command();

 private:
  CLI::App& app_;
  std::string options_for_;
  std::vector<CLI::App*> built_;
};

// The word CLI11 will take as the command for ARGV, found the way CLI11 finds it: the first word
// that is neither one of APP's own options nor the value of one (`--root DIR status`,
// `--gpu=nvml plan`); APP has its options and no subcommands yet. Empty when the answer is not that
// plain: `--`, an option APP does not have, --help or --version before the command, no word at
// all. The run then builds every command's options and CLI11 decides (and reports) as it always
// has; so it does when the word names no command (CLI11 may still find one further on).
std::string command_in_argv(const CLI::App& app, int argc, const char* const* argv);

}  // namespace sparkops::cli
