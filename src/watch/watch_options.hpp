#pragma once
// `sparkops watch`'s flags as the session's options (watch_session.hpp WatchOptions): the
// command, the run folder and log, the sampling interval and format, and what the config says
// (sample.interval, sample.fsync_every and sample.memory_buffer_rows, watch.max_log_bytes, the
// thermal and analyze thresholds).

#include <string>
#include <vector>

#include "base/clock.hpp"
#include "base/output_file.hpp"
#include "base/result.hpp"
#include "config/config.hpp"
#include "watch/watch_session.hpp"

namespace sparkops::watch {

// The flags' text, as given.
struct WatchArgs {
  std::vector<std::string> command;   // CMD ... after `--`
  std::string dir;                    // --dir; empty: ./sparkops-run-<UTC time>
  std::string log;                    // --log; empty: DIR/train.log
  std::string interval;               // --interval; empty: config sample.interval
  std::string format = "nvidia-smi";  // --format: nvidia-smi, extended or jsonl
  bool kill_orphans = false;          // --kill-orphans
  bool no_pty = false;                // --no-pty
};

// `now` names the default run folder. Errors name the flag or the config key.
Result<WatchOptions> watch_options(const WatchArgs& args, const config::Config& config,
                                   OutputTrust trust, SystemTime now);

}  // namespace sparkops::watch
