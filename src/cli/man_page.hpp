#pragma once
// sparkops(1) in roff, generated from the same command tree and descriptions as --help (built at
// build time by `sparkops help --man`; installed by `cmake --install` and the .deb).

#include <string>

#include "cli/command_spec.hpp"

namespace sparkops::cli {

std::string man_page(const ProgramSpec& spec, const std::string& version);

}  // namespace sparkops::cli
