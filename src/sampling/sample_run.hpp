#pragma once
// The `sparkops sample` session: files, schedule, printing; the per-tick sampling is sampler.hpp.

#include <chrono>
#include <string>

#include <atomic>

#include "base/console.hpp"
#include "config/config.hpp"
#include "config/run_sections.hpp"
#include "gpu/gpu_source.hpp"
#include "host/host_root.hpp"
#include "sampling/appender.hpp"
#include "sampling/scheduler.hpp"
#include "sampling/throttle_detector.hpp"
#include "sampling/writers.hpp"

namespace sparkops::sampling {

// What the signal thread (cli/signal_bridge.hpp) tells the loop besides a stop: SIGHUP reopens
// its files (logrotate) before the next tick.
struct SampleSignalFlags {
  std::atomic<bool> reopen{false};
};

struct SampleOptions {
  std::chrono::nanoseconds interval = config::SampleSettings{}.interval;
  std::string out = "thermal.log";  // "-" = stdout (no durability guarantees there)
  SampleFormat format = SampleFormat::nvidia_smi;
  std::string events;  // empty: <out>.events beside --out (stderr only when out is "-")
  ScheduleLimits limits;
  DetectorConfig detector;
  AppenderOptions appender;
  bool json = false;  // summary at exit as JSON on stdout
};

// --interval's text (30, 0.5, 30s), or `fallback` (config sample.interval) when it is empty; at
// least 1 ms. Errors name the flag ("--interval TEXT: ..."). `sample` and `watch` both ask here.
Result<std::chrono::nanoseconds> sample_interval(const std::string& text,
                                                 std::chrono::nanoseconds fallback);

// "<out>.events", or empty when rows go to stdout.
std::string default_events_path(const std::string& out);

// The thermal.* detector thresholds from the effective config.
DetectorConfig detector_from_config(const config::Config& config);

// Opens (creating or appending to) the sample file options.out with the header rules of
// check_existing_header; used by `sample` and `watch`.
Result<DurableAppender> open_sample_file(const SampleOptions& options, const FileMeta& meta,
                                         OpenReport* report);
// Opens the throttle events file (fsync on every line; its header is checked when appending).
Result<DurableAppender> open_events_file(const std::string& path, const SampleOptions& options,
                                         OpenReport* report);

// Runs until a limit or a stop requested on `stop` (SIGINT/SIGTERM). Returns the exit code: 0,
// kExitBadInput when a file cannot be used (different header, not writable), kExitFailure when rows
// were still unwritten at exit.
int run_sample(const Console& io, const host::HostRoot& root, const SampleOptions& options,
               gpu::GpuSource* gpu, Clock& clock, std::stop_token stop, SampleSignalFlags& flags);

}  // namespace sparkops::sampling
