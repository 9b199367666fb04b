#include "cli/app_context.hpp"

#include <cstdlib>

namespace sparkops::cli {

HostRoot AppContext::host_root() const {
  return host_root_from(root_flag, std::getenv("SPARKOPS_ROOT"));
}

}  // namespace sparkops::cli
