#pragma once

namespace sparkops::cli {

// Parses argv, loads the configuration and runs one subcommand. Returns the process exit code.
int run(int argc, char** argv);

}  // namespace sparkops::cli
