#pragma once
// What every subcommand receives: the global options, the loaded configuration and where to write
// (the Console it extends). Subcommands return their exit code through `exit_code`; only cli/
// prints or exits.

#include <cstdio>
#include <string>
#include <vector>

#include "base/console.hpp"
#include "base/output_file.hpp"
#include "base/result.hpp"
#include "config/config.hpp"
#include "host/host_root.hpp"

namespace sparkops::cli {

struct GpuFlags {
  std::string backend;  // --gpu auto|nvml|nvidia-smi|none; empty: SPARKOPS_GPU_BACKEND, else auto
};

// The global options (cli/global_options.hpp) are accepted before or after the subcommand and all
// land here.
struct AppContext : Console {
  std::string root_flag;    // --root DIR; empty = SPARKOPS_ROOT or "/"
  bool no_color = false;    // --no-color (term/colour.hpp decides whether colour is on)
  bool json = false;        // --json: the command's JSON document (docs/json.md) instead of text
  bool quiet = false;       // --quiet: no progress line on stderr (term/progress_line.hpp)
  GpuFlags gpu;             // --gpu SOURCE
  std::string config_file;  // --config FILE: read last, like SPARKOPS_CONFIG (the flag wins)
  // --trust-output-path: write through a symlinked directory or into one other users can write
  // to (base/output_file.hpp); checked by default.
  OutputTrust output_trust = OutputTrust::checked;
  config::Config config;
  // Configuration layers that could not be loaded. Only `sparkops config` runs with a non-empty
  // list (it shows the values in effect and the bad key); every other command stops first.
  std::vector<Error> config_problems;
  int exit_code = kExitOk;

  host::HostRoot host_root() const;
  // Colour on `stream`: a terminal, NO_COLOR unset, TERM capable and no --no-color.
  bool colour(std::FILE* stream) const;
  // A progress line on stderr: a terminal and no --quiet.
  bool progress() const;
};

}  // namespace sparkops::cli
