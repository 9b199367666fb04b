#include <csignal>
#include <cstdio>
#include <exception>

#include <fmt/format.h>

#include "cli/app_context.hpp"
#include "cli/run.hpp"

int main(int argc, char** argv) {
  // A write past RLIMIT_FSIZE (`ulimit -f`, systemd `LimitFSIZE=`) must be a write error (EFBIG)
  // that the writer names in one line, with what was written kept, never death by SIGXFSZ.
  // Processes sparkops starts get the default disposition back (watch's job, nvidia-smi).
  std::signal(SIGXFSZ, SIG_IGN);
  try {
    return sparkops::cli::run(argc, argv);
  } catch (const std::exception& e) {
    // Exceptions are bugs (docs/design.md): say so once and exit with EX_SOFTWARE.
    fmt::print(stderr, "sparkops: internal error: {}\n", e.what());
    return sparkops::kExitInternal;
  }
}
