#pragma once
// What every subcommand receives: the global options, the loaded configuration and where to write.
// Subcommands return their exit code through `exit_code`; only cli/ prints or exits.

#include <cstdio>
#include <string>

#include "cli/config.hpp"
#include "host/host_root.hpp"

namespace sparkops::cli {

// Exit codes shared by every subcommand (README "Exit codes").
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;    // the command ran and the answer is "no" / it failed
inline constexpr int kExitBadInput = 2;   // bad flag, file or value: one line on stderr
inline constexpr int kExitInternal = 70;  // a bug (EX_SOFTWARE)

struct AppContext {
  std::string root_flag;  // --root DIR; empty = SPARKOPS_ROOT or "/"
  Config config;
  int exit_code = kExitOk;
  std::FILE* out = stdout;
  std::FILE* err = stderr;

  HostRoot host_root() const;
};

// Prints "sparkops: <message>" on err, one line.
void print_error(const AppContext& ctx, std::string_view message);

}  // namespace sparkops::cli
