#pragma once
// What every subcommand receives: the global options, the loaded configuration and where to write
// (the Console it extends). Subcommands return their exit code through `exit_code`; only cli/
// prints or exits.

#include <string>

#include "base/console.hpp"
#include "base/output_file.hpp"
#include "config/config.hpp"
#include "host/host_root.hpp"

namespace sparkops::cli {

struct AppContext : Console {
  std::string root_flag;  // --root DIR; empty = SPARKOPS_ROOT or "/"
  bool no_color = false;  // --no-color (cli/colour.hpp decides whether colour is on)
  // --trust-output-path: write through a symlinked directory or into one other users can write
  // to (base/output_file.hpp); checked by default.
  OutputTrust output_trust = OutputTrust::checked;
  Config config;
  int exit_code = kExitOk;

  HostRoot host_root() const;
};

}  // namespace sparkops::cli
