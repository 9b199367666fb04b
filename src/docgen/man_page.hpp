#pragma once
// sparkops(1) in roff, generated from the same command tree and descriptions as --help (built at
// build time by `sparkops help --man`; installed by `cmake --install` and the .deb).

#include <string>

#include "docgen/program_spec.hpp"

namespace sparkops::docgen {

std::string man_page(const ProgramSpec& spec, const std::string& version);

}  // namespace sparkops::docgen
