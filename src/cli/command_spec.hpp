#pragma once
// The command line as data (docgen/program_spec.hpp), read from the CLI11 tree after every
// command is registered: what the man page and the shell completions are generated from.

#include <CLI/CLI.hpp>

#include "docgen/program_spec.hpp"

namespace sparkops::cli {

docgen::ProgramSpec program_spec(const CLI::App& app);

}  // namespace sparkops::cli
