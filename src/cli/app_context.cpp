#include "cli/app_context.hpp"

#include <cstdlib>

#include "term/colour.hpp"
#include "term/terminal.hpp"

namespace sparkops::cli {

host::HostRoot AppContext::host_root() const {
  return host::host_root_from(root_flag, std::getenv("SPARKOPS_ROOT"));
}

bool AppContext::colour(std::FILE* stream) const {
  return term::colour_enabled(stream, no_color);
}

bool AppContext::progress() const {
  return !quiet && term::is_terminal(err);
}

}  // namespace sparkops::cli
