#pragma once
// --help in user terms, in one place: `--count N` (not `N:UINT in [1 - 1000000000000]=0
// Excludes: --duration`), the default in words beside the description, one example per command.
// The man page (docgen/man_page.hpp) and the shell completions (docgen/completion.hpp) read the
// same option descriptions through the functions below, so the three never disagree.

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace sparkops::cli {

class HelpFormatter : public CLI::Formatter {
 public:
  HelpFormatter() { column_width(34); }
  std::string make_option_opts(const CLI::Option* opt) const override;
  std::string make_option_desc(const CLI::Option* opt) const override;
};

// What the option's value is called: its type_name when it names one (DIR, FILE, SIZE, N), else
// the last word of the long name (`--lora-rank` -> RANK). Empty for flags.
std::string value_label(const CLI::Option& opt);

// The description plus " (default X)" when the option has a meaningful default the text does not
// already state.
std::string option_description(const CLI::Option& opt);

// The values an option accepts when they form a closed set: an IsMember check, or a description
// that starts with `a | b | c`. Empty when the value is free.
std::vector<std::string> enum_values(const CLI::Option& opt);

// True when the option names a file or a directory (completion offers paths).
bool takes_path(const CLI::Option& opt);

// The visible subcommands in the order they were added.
std::vector<const CLI::App*> visible_subcommands(const CLI::App& app);

// One example per command, set as the subcommand's footer ("Example:" block).
void add_examples(CLI::App& app);

}  // namespace sparkops::cli
