#include "cli/command_spec.hpp"

#include "cli/global_options.hpp"
#include "cli/help_format.hpp"
#include "models/catalogue.hpp"

namespace sparkops::cli {

using docgen::CommandSpec;
using docgen::OptionSpec;
using docgen::ProgramSpec;

namespace {

OptionSpec option_spec(const CLI::Option& opt) {
  OptionSpec s;
  for (const auto& n : opt.get_snames()) s.names.push_back("-" + n);
  for (const auto& n : opt.get_lnames()) s.names.push_back("--" + n);
  s.label = value_label(opt);
  s.description = option_description(opt);
  s.values = enum_values(opt);
  s.path = takes_path(opt);
  s.directory = s.label == "DIR";
  return s;
}

std::vector<OptionSpec> options_of(const CLI::App& app, bool global) {
  std::vector<OptionSpec> out;
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_positional() || opt->get_group().empty()) continue;
    // --help is on every command; list it once, with the global options.
    const bool is_global = opt->get_group() == kGlobalGroup || opt->get_name() == "--help" ||
                           opt->get_name() == "--version";
    if (is_global != global) continue;
    out.push_back(option_spec(*opt));
  }
  return out;
}

}  // namespace

ProgramSpec program_spec(const CLI::App& app) {
  ProgramSpec p;
  p.description = app.get_description();
  p.global_options = options_of(app, true);
  for (const auto& entry : models::catalogue()) {
    p.model_names.push_back(entry.name);
    if (!entry.repo.empty()) p.model_names.push_back(entry.repo);
  }
  std::vector<std::string> names;
  for (const CLI::App* sub : visible_subcommands(app)) names.push_back(sub->get_name());
  for (const CLI::App* sub : visible_subcommands(app)) {
    CommandSpec c;
    c.name = sub->get_name();
    c.description = sub->get_description();
    c.footer = sub->get_footer();
    c.options = options_of(*sub, false);
    for (const CLI::Option* opt : sub->get_options()) {
      // The first positional is the one completed (plan's ENGINE_ARGS follow `--`).
      if (!opt->get_positional() || !c.positional.empty()) continue;
      c.positional = opt->get_name();
      c.positional_description = option_description(*opt);
    }
    if (c.positional == "MODEL") c.positional_values = p.model_names;
    if (c.positional == "COMMAND") c.positional_values = names;
    if (c.positional == "SHELL") c.positional_values = {"bash", "zsh", "fish"};
    p.commands.push_back(std::move(c));
  }
  return p;
}

}  // namespace sparkops::cli
