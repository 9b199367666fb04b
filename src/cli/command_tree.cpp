#include "cli/command_tree.hpp"

#include <algorithm>
#include <utility>

namespace sparkops::cli {

CommandTree::CommandTree(CLI::App& app, std::string options_for)
    : app_(app), options_for_(std::move(options_for)) {}

CLI::App* CommandTree::add(const char* name, const char* description) {
  CLI::App* sub = app_.add_subcommand(name, description);
  // check_name is how CLI11 matches the word to the command, so the two cannot disagree.
  if (!options_for_.empty() && !sub->check_name(options_for_)) return nullptr;
  built_.push_back(sub);
  return sub;
}

void CommandTree::build_every_command() {
  for (CLI::App* sub : app_.get_subcommands([](CLI::App*) { return true; })) {
    app_.remove_subcommand(sub);
  }
  options_for_.clear();
  built_.clear();
}

std::string command_in_argv(const CLI::App& app, int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view word = argv[i] == nullptr ? std::string_view() : argv[i];
    if (word.empty()) return {};
    if (word.front() != '-') return std::string(word);
    if (word == "--") return {};  // what follows is positional: leave it to CLI11
    const auto eq = word.find('=');
    const CLI::Option* opt = app.get_option_no_throw(std::string(word.substr(0, eq)));
    if (opt == nullptr || opt == app.get_help_ptr() || opt == app.get_version_ptr()) return {};
    // An option with a value and no `=` takes the next word whatever it looks like: CLI11 gathers
    // this minimum count of values unconditionally (App::_parse_arg); flags take none.
    // An option that may take more (a list) is left to CLI11.
    const int min_values = std::min(opt->get_type_size_min(), opt->get_items_expected_min());
    if (opt->get_items_expected_max() > min_values) return {};
    if (eq == std::string_view::npos) i += min_values;
  }
  return {};
}

}  // namespace sparkops::cli
