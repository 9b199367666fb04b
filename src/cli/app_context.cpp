#include "cli/app_context.hpp"

#include <cstdlib>

#include <fmt/format.h>

#include "base/utf8.hpp"

namespace sparkops::cli {

HostRoot AppContext::host_root() const {
  return host_root_from(root_flag, std::getenv("SPARKOPS_ROOT"));
}

void print_error(const AppContext& ctx, std::string_view message) {
  fmt::print(ctx.err, "sparkops: {}\n", terminal_text(message));
}

}  // namespace sparkops::cli
