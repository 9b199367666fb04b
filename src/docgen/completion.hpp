#pragma once
// Shell completion scripts for bash, zsh and fish, generated from the command tree
// (`sparkops completion SHELL`; the .deb ships all three). They complete subcommands, flags, the
// values of flags with a closed set (--gpu, --method ...), catalogue model names for MODEL, and
// files or directories for flags that take them.

#include <string>
#include <string_view>

#include "docgen/program_spec.hpp"

namespace sparkops::docgen {

// Empty when `shell` is not bash, zsh or fish.
std::string completion_script(const ProgramSpec& spec, std::string_view shell);

}  // namespace sparkops::docgen
