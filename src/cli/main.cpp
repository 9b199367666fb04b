#include <cstdio>
#include <exception>

#include <fmt/format.h>

#include "cli/app_context.hpp"
#include "cli/run.hpp"

int main(int argc, char** argv) {
  try {
    return sparkops::cli::run(argc, argv);
  } catch (const std::exception& e) {
    // Exceptions are bugs (docs/design.md): say so once and exit with EX_SOFTWARE.
    fmt::print(stderr, "sparkops: internal error: {}\n", e.what());
    return sparkops::kExitInternal;
  }
}
