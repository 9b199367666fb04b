#pragma once
// The command line as data: every command, its options, their value names, closed value sets and
// descriptions, as --help shows them. The man page and the shell completions are generated from
// this alone (pure text functions of it), so they list exactly what --help does; cli reads it from
// its CLI11 tree (cli/command_spec.hpp).

#include <string>
#include <vector>

namespace sparkops::docgen {

struct OptionSpec {
  std::vector<std::string> names;   // "-h", "--help"
  std::string label;                // value name (DIR, SIZE); empty for a flag
  std::string description;          // with the default, as --help shows it
  std::vector<std::string> values;  // a closed set of values, else empty
  bool path = false;                // the value is a file or directory
  bool directory = false;           // ... a directory
};

struct CommandSpec {
  std::string name;                    // empty for the program itself
  std::string description;             // first paragraph of the help text
  std::string footer;                  // the example
  std::vector<OptionSpec> options;     // the command's own (global ones are in ProgramSpec)
  std::string positional;              // its positional's name (MODEL, CMD, COMMAND), or empty
  std::string positional_description;  // as --help shows it
  std::vector<std::string> positional_values;  // model names, command names, shells
};

struct ProgramSpec {
  std::string description;
  std::vector<OptionSpec> global_options;  // incl. --help and --version
  std::vector<CommandSpec> commands;
  std::vector<std::string> model_names;  // the catalogue's names and Hub ids, for MODEL
};

}  // namespace sparkops::docgen
