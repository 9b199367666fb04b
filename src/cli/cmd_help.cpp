// `sparkops help [COMMAND]`, `sparkops help --man` (the man page, built at build time) and
// `sparkops completion bash|zsh|fish`. They read no configuration and no machine.

#include <fmt/format.h>

#include "base/text.hpp"
#include "base/version.hpp"
#include "cli/command_spec.hpp"
#include "cli/commands.hpp"
#include "docgen/completion.hpp"
#include "docgen/man_page.hpp"

namespace sparkops::cli {
namespace {

const CLI::App* find_command(const CLI::App& app, const std::string& name) {
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->check_name(name)) return sub;
  }
  return nullptr;
}

}  // namespace

void add_help_command(CommandTree& tree, AppContext& ctx) {
  CLI::App& app = tree.app();
  auto* cmd = tree.add("help", "Help for every command, or for one: sparkops help COMMAND");
  if (cmd == nullptr) return;
  auto command = std::make_shared<std::string>();
  auto man = std::make_shared<bool>(false);
  cmd->add_option("COMMAND", *command, "The command to explain");
  cmd->add_flag("--man", *man, "Print the sparkops(1) manual page (roff) instead");
  cmd->callback([&app, &ctx, command, man] {
    if (*man) {
      fmt::print(ctx.out, "{}", docgen::man_page(program_spec(app), std::string(kVersion)));
      return;
    }
    if (command->empty()) {
      fmt::print(ctx.out, "{}",
                 app.get_formatter()->make_help(&app, "sparkops", CLI::AppFormatMode::Normal));
      return;
    }
    const CLI::App* sub = find_command(app, *command);
    if (sub == nullptr) {
      print_error(ctx, fmt::format("help {}: no such command (see `sparkops help`)",
                                   quote_for_message(*command)));
      ctx.exit_code = kExitBadInput;
      return;
    }
    fmt::print(ctx.out, "{}",
               sub->get_formatter()->make_help(sub, "sparkops " + sub->get_name(),
                                               CLI::AppFormatMode::Normal));
  });
}

void add_completion_command(CommandTree& tree, AppContext& ctx) {
  CLI::App& app = tree.app();
  auto* cmd = tree.add(
      "completion",
      "Print a shell completion script: subcommands, flags, flag values, model names and files");
  if (cmd == nullptr) return;
  auto shell = std::make_shared<std::string>();
  cmd->add_option("SHELL", *shell, "bash | zsh | fish")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh", "fish"}));
  cmd->callback([&app, &ctx, shell] {
    fmt::print(ctx.out, "{}", docgen::completion_script(program_spec(app), *shell));
  });
}

}  // namespace sparkops::cli
