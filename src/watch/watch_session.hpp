#pragma once
// One `sparkops watch` run: launch the job, pump its output (terminal, log, sidecar, parsers),
// sample on schedule, print events as they happen, forward signals, and report what happened.
// The pre-flight, the summary, the anchor and the OOM advice are the caller's (cmd_watch.cpp).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.hpp"
#include "base/console.hpp"
#include "base/result.hpp"
#include "config/run_sections.hpp"
#include "diagnose/live_slowdown.hpp"
#include "gpu/gpu_source.hpp"
#include "host/host_root.hpp"
#include "sampling/appender.hpp"
#include "sampling/throttle_detector.hpp"
#include "sampling/writers.hpp"
#include "trainlog/step_series.hpp"
#include "watch/watch_orphans.hpp"

namespace sparkops::watch {

// What the signal handlers (cli/signal_bridge.hpp) tell the loop: SIGINT, SIGTERM and SIGHUP are
// counted (the first is forwarded to the job's process group, the second kills the group); SIGCHLD
// only wakes the loop.
struct WatchSignalFlags {
  std::atomic<int> stop_count{0};
  std::atomic<int> last_signal{0};
  std::atomic<bool> child{false};
  std::atomic<bool> winch{
      false};  // SIGWINCH: the terminal was resized (passed on to the job's pty)
};

struct WatchOptions {
  std::vector<std::string> command;
  // The job's stdout/stderr on pseudo-terminals (watch_child.hpp); false = pipes (--no-pty). When
  // no pty can be opened the job runs on pipes and a note says so.
  bool pty = true;
  std::filesystem::path dir;  // run folder: thermal.log, events.log
  std::filesystem::path log;  // the job's output (sidecar: <log>.times)
  std::chrono::nanoseconds interval = config::SampleSettings{}.interval;
  sampling::SampleFormat format = sampling::SampleFormat::nvidia_smi;
  sampling::DetectorConfig detector;
  sampling::AppenderOptions appender;  // also .trust for the log, its sidecar and summary.json
  diagnose::LiveSlowdownOptions slowdown;
  double pressure_psi_share = 0.10;           // PSI memory "some" over the interval that counts
  double pressure_available_share = 0.05;     // MemAvailable below this share of MemTotal counts
  std::chrono::milliseconds drain_idle{250};  // after the job exits: stop after this long quiet...
  std::chrono::milliseconds drain_max{2000};  // ...or this long in all (daemons holding the pipe)
  std::size_t tail_bytes = 256 << 10;         // output kept for the OOM classifier
  std::uint64_t max_log_bytes = UINT64_MAX;   // watch.max_log_bytes: the log stops there
  // --kill-orphans: end what the job left running (watch_orphans.hpp); SIGKILL after this grace,
  // docker stop's default (10 s) between SIGTERM and SIGKILL.
  bool kill_orphans = false;
  std::chrono::milliseconds orphan_grace{10'000};
};

struct WatchOutcome {
  int exit_code = 0;  // the job's status, 128 + n when killed by signal n
  std::optional<int> term_signal;
  bool killed_by_watch = false;  // the second Ctrl-C/SIGTERM sent SIGKILL
  std::optional<int> forwarded_signal;
  pid_t pid = -1;
  SystemTime started{};
  SystemTime ended{};
  std::uint64_t output_bytes = 0;
  bool files_failed = false;
  std::optional<trainlog::StepSeries> series;
  std::optional<double> live_baseline_seconds;
  std::optional<double> last_seconds;
  std::string tail;  // the last tail_bytes of the output (both streams)
  std::uint64_t samples = 0;
  std::uint64_t throttle_episodes = 0;  // start edges
  std::uint64_t slowdown_events = 0;
  std::uint64_t pressure_events = 0;
  // Pool use = MemTotal - MemAvailable; GPU-resident = the sum of per-process GPU memory.
  std::optional<std::uint64_t> launch_used_bytes;
  std::optional<std::uint64_t> peak_used_bytes;
  std::optional<std::uint64_t> launch_gpu_process_bytes;
  std::optional<std::uint64_t> peak_gpu_process_bytes;
  std::optional<std::uint64_t> peak_over_launch_bytes() const;
  // Processes the job left running when its main process exited (watch_orphans.hpp), and what
  // --kill-orphans did about them.
  std::vector<Orphan> orphans;
  // Every warning the session printed on stderr (file failures, the pty fallback, orphans ...),
  // in order: the summary's `notes`.
  std::vector<std::string> warnings;
  std::optional<OrphanEnd> orphans_ended;
};

// Errors: the run folder's files cannot be opened, or CMD cannot be started (not_found /
// permission_denied when exec failed).
Result<WatchOutcome> run_watch_session(const Console& io, const host::HostRoot& root,
                                       const WatchOptions& options, gpu::GpuSource* gpu,
                                       Clock& clock, WatchSignalFlags& flags);

}  // namespace sparkops::watch
