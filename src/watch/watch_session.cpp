#include "watch/watch_session.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "base/version.hpp"
#include "base/wait_status.hpp"
#include "sampling/sample_run.hpp"
#include "sampling/sampler.hpp"
#include "sampling/scheduler.hpp"
#include "trainlog/live_tracker.hpp"
#include "watch/watch_child.hpp"
#include "watch/watch_events.hpp"
#include "watch/watch_output.hpp"

namespace sparkops::watch {

std::optional<std::uint64_t> WatchOutcome::peak_over_launch_bytes() const {
  if (!launch_used_bytes || !peak_used_bytes) return std::nullopt;
  return *peak_used_bytes > *launch_used_bytes ? *peak_used_bytes - *launch_used_bytes : 0;
}

namespace {

constexpr std::size_t kReadChunk = 64 * 1024;
constexpr auto kMaxPollWait = std::chrono::milliseconds{100};

std::optional<std::uint64_t> used_bytes(const host::HostReading& h) {
  if (!h.mem_total_bytes || !h.mem_available_bytes) return std::nullopt;
  return *h.mem_total_bytes > *h.mem_available_bytes ? *h.mem_total_bytes - *h.mem_available_bytes
                                                     : 0;
}

std::optional<std::uint64_t> gpu_process_bytes(const sampling::Sample& s) {
  std::optional<std::uint64_t> total;
  for (const auto& g : s.gpus) {
    if (const auto b = g.process_memory_bytes()) total = total.value_or(0) + *b;
  }
  return total;
}

void keep_max(std::optional<std::uint64_t>& peak, std::optional<std::uint64_t> v) {
  if (v && (!peak || *v > *peak)) peak = v;
}

// Everything one run holds while the loop turns.
class Session {
 public:
  Session(const Console& io, const host::HostRoot& root, const WatchOptions& options,
          gpu::GpuSource* gpu, Clock& clock, WatchSignalFlags& flags, OutputSink sink,
          sampling::DurableAppender thermal, sampling::DurableAppender events)
      : io_(io),
        options_(options),
        clock_(clock),
        flags_(flags),
        root_(root),
        sink_(std::move(sink)),
        thermal_(std::move(thermal)),
        events_(std::move(events)),
        collector_(root_, gpu),
        sampler_(collector_, options.format, options.detector),
        slowdown_(options.slowdown),
        pressure_(
            PressureThresholds{options.pressure_psi_share, options.pressure_available_share}) {}

  Result<WatchOutcome> run();

 private:
  void pump(int stream, int& fd, bool& got_data);
  void on_record(std::string_view record, std::uint64_t offset, SystemTime arrival);
  void sample_tick(const sampling::Tick& t);
  void emit_event(const std::string& line);
  void warn(const std::string& message);  // on stderr and into the outcome's warnings
  void report_file_failures();
  void handle_signals(const ChildProcess& child);
  // After the job's exit: report what it left running, end it with --kill-orphans.
  void handle_orphans(pid_t self, pid_t own_pgrp, pid_t job_pgrp);

  const Console& io_;
  const WatchOptions& options_;
  Clock& clock_;
  WatchSignalFlags& flags_;
  host::HostRoot root_;
  OutputSink sink_;
  sampling::DurableAppender thermal_;
  sampling::DurableAppender events_;
  sampling::Collector collector_;
  sampling::Sampler sampler_;
  trainlog::LiveTracker tracker_;
  diagnose::LiveSlowdownDetector slowdown_;
  PressureTracker pressure_;
  std::array<RecordSplitter, 2> splitters_{RecordSplitter(), RecordSplitter()};
  std::vector<trainlog::LiveStep> steps_;
  std::optional<sampling::Sample> latest_;
  std::vector<char> buffer_ = std::vector<char>(kReadChunk);
  WatchOutcome out_;
  int handled_signals_ = 0;
  bool side_failure_said_ = false;
};

void Session::warn(const std::string& message) {
  print_error(io_, message);
  out_.warnings.push_back(message);
}

void Session::emit_event(const std::string& line) {
  fmt::print(io_.err, "sparkops: event {}", line);
  std::fflush(io_.err);
  const sampling::AppendReport r = events_.append(line);
  if (r.failed_now && !side_failure_said_) {
    side_failure_said_ = true;
    warn(fmt::format("{}; events stay on stderr and are kept in memory", r.failed_now->detail));
  }
}

void Session::report_file_failures() {
  if (auto failure = sink_.take_failure()) warn(*failure);
}

void Session::on_record(std::string_view record, std::uint64_t offset, SystemTime arrival) {
  steps_.clear();
  tracker_.feed(record, offset, arrival, steps_);
  for (const auto& s : steps_) {
    if (!s.seconds) continue;
    if (auto e = slowdown_.feed(s.step, *s.seconds, s.time)) {
      emit_event(format_slowdown_event(*e, arrival, latest_ ? &*latest_ : nullptr));
      if (e->edge == diagnose::SlowdownEdge::start) ++out_.slowdown_events;
    }
  }
}

void Session::pump(int stream, int& fd, bool& got_data) {
  for (int round = 0; round < 16 && fd >= 0; ++round) {
    const ssize_t n = ::read(fd, buffer_.data(), buffer_.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) {
      ::close(fd);
      fd = -1;
      const SystemTime now = clock_.system_now();
      splitters_[static_cast<std::size_t>(stream - 1)].finish(
          [&](std::string_view r, std::uint64_t o) { on_record(r, o, now); });
      return;
    }
    got_data = true;
    const SystemTime arrival = clock_.system_now();
    const std::string_view data(buffer_.data(), static_cast<std::size_t>(n));
    const std::uint64_t offset = sink_.forward(stream, data, arrival);
    out_.tail.append(data);
    if (out_.tail.size() > 2 * options_.tail_bytes)
      out_.tail.erase(0, out_.tail.size() - options_.tail_bytes);
    splitters_[static_cast<std::size_t>(stream - 1)].feed(
        data, offset, [&](std::string_view r, std::uint64_t o) { on_record(r, o, arrival); });
    if (static_cast<std::size_t>(n) < buffer_.size()) return;
  }
}

void Session::sample_tick(const sampling::Tick& t) {
  sampling::TickResult result = sampler_.tick(t);
  for (auto& row : result.rows) {
    const sampling::AppendReport r = thermal_.append(std::move(row));
    if (r.failed_now && !side_failure_said_) {
      side_failure_said_ = true;
      warn(fmt::format("{}; the job keeps running, samples are kept in memory and retried",
                       r.failed_now->detail));
    }
  }
  ++out_.samples;
  for (const auto& e : result.events) {
    emit_event(sampling::format_event_line(e));
    if (e.edge == sampling::EpisodeEdge::start) ++out_.throttle_episodes;
  }
  if (auto line = pressure_.feed(result.sample)) {
    emit_event(*line);
    if (line->find(" start ") != std::string::npos) ++out_.pressure_events;
  }
  keep_max(out_.peak_used_bytes, used_bytes(result.sample.host));
  keep_max(out_.peak_gpu_process_bytes, gpu_process_bytes(result.sample));
  latest_ = std::move(result.sample);
}

void Session::handle_orphans(pid_t self, pid_t own_pgrp, pid_t job_pgrp) {
  out_.orphans = find_orphans(self, own_pgrp);
  if (out_.orphans.empty()) return;
  const auto n = out_.orphans.size();
  if (!options_.kill_orphans) {
    warn(
        fmt::format("{} process(es) the job started outlived it and keep running: {} "
                    "(their output is no longer read; --kill-orphans ends them)",
                    n, describe_orphans(out_.orphans)));
    return;
  }
  auto ended = end_orphans(self, own_pgrp, job_pgrp, out_.orphans, options_.orphan_grace);
  warn(
      fmt::format("--kill-orphans: ended {} process(es) the job left running: {} ({} after "
                  "SIGTERM, {} after SIGKILL){}",
                  n, describe_orphans(out_.orphans), ended.terminated, ended.killed,
                  ended.survivors.empty() ? std::string()
                                          : "; still alive: " + describe_orphans(ended.survivors)));
  out_.orphans_ended = std::move(ended);
}

void Session::handle_signals(const ChildProcess& child) {
  if (flags_.winch.exchange(false) && child.pty) {
    if (const auto size = own_terminal_size()) resize_job_terminal(child, *size);
  }
  const int count = flags_.stop_count.load();
  if (count == handled_signals_) return;
  handled_signals_ = count;
  const int sig = flags_.last_signal.load();
  if (count == 1) {
    const int forward = sig == SIGHUP ? SIGHUP : sig == SIGTERM ? SIGTERM : SIGINT;
    signal_job(child, forward);
    out_.forwarded_signal = forward;
    print_error(
        io_, fmt::format("forwarded SIG{} to the job (process group {}); a second Ctrl-C kills it",
                         sigabbrev_np(forward), child.pid));
  } else if (!out_.killed_by_watch) {
    signal_job(child, SIGKILL);
    out_.killed_by_watch = true;
    print_error(
        io_, fmt::format("second signal: sent SIGKILL to the job (process group {})", child.pid));
  }
}

Result<WatchOutcome> Session::run() {
  const host::HostReading launch = host::read_host_reading(root_);
  out_.launch_used_bytes = used_bytes(launch);
  out_.started = clock_.system_now();
  const pid_t self = ::getpid();
  const pid_t own_pgrp = ::getpgrp();
  if (auto reaper = become_child_subreaper(); !reaper) {
    warn(fmt::format("{}: processes the job leaves behind may go unreported",
                     reaper.error().detail));
  }
  const ChildOutput output = options_.pty ? ChildOutput::pty : ChildOutput::pipes;
  auto child = spawn_child(options_.command, output, own_terminal_size());
  if (!child && output == ChildOutput::pty && child.error().code == Errc::unsupported) {
    warn(fmt::format("{}; the job's output goes through pipes (as with --no-pty)",
                     child.error().detail));
    child = spawn_child(options_.command, ChildOutput::pipes);
  }
  if (!child) return tl::unexpected(child.error());
  out_.pid = child->pid;
  int fds[2] = {child->out_fd, child->err_fd};

  const SteadyTime t0 = clock_.steady_now();
  const sampling::TickSchedule schedule(t0, options_.interval);
  std::uint64_t next_tick = 0, skipped = 0;
  bool exited = false;
  int status = 0;
  SteadyTime exit_at{}, last_data{};

  while (true) {
    handle_signals(*child);
    const SteadyTime now = clock_.steady_now();
    if (!exited) {
      const bool sigchld = flags_.child.exchange(false);
      const pid_t r = ::waitpid(child->pid, &status, WNOHANG);
      if (r == child->pid) {
        exited = true;
        exit_at = now;
        last_data = now;
      } else if (sigchld) {
        (void)find_orphans(self, own_pgrp, child->pid);  // reaps re-parented orphans that ended
      }
    }
    if (!exited && now >= schedule.due(next_tick)) {
      sampling::Tick t{next_tick, schedule.due(next_tick), now, clock_.system_now(), skipped};
      sample_tick(t);
      if (next_tick == 0) {
        out_.launch_gpu_process_bytes = out_.peak_gpu_process_bytes;
      }
      const auto next = schedule.next_after(next_tick, clock_.steady_now());
      next_tick = next.tick;
      skipped = next.skipped;
    }
    if (exited) {
      const bool both_closed = fds[0] < 0 && fds[1] < 0;
      if (both_closed || now - last_data >= options_.drain_idle ||
          now - exit_at >= options_.drain_max)
        break;
    }
    auto wait =
        std::chrono::duration_cast<std::chrono::milliseconds>(schedule.due(next_tick) - now);
    wait = std::clamp(wait, std::chrono::milliseconds{0}, std::chrono::milliseconds{kMaxPollWait});
    if (exited) wait = std::min(wait, std::chrono::milliseconds{20});
    pollfd p[2];
    nfds_t n = 0;
    for (int i = 0; i < 2; ++i) {
      if (fds[i] >= 0) p[n++] = pollfd{fds[i], POLLIN, 0};
    }
    const int ready = ::poll(n > 0 ? p : nullptr, n, static_cast<int>(wait.count()));
    if (ready <= 0) continue;
    bool got = false;
    for (int i = 0; i < 2; ++i) {
      if (fds[i] >= 0) pump(i + 1, fds[i], got);
    }
    sink_.flush_sidecar();
    report_file_failures();
    if (got) last_data = clock_.steady_now();
  }
  for (int i = 0; i < 2; ++i) {
    if (fds[i] >= 0) {
      ::close(fds[i]);  // a daemon still holds the pipe: stop reading it
      fds[i] = -1;
    }
    const SystemTime now = clock_.system_now();
    splitters_[static_cast<std::size_t>(i)].finish(
        [&](std::string_view r, std::uint64_t o) { on_record(r, o, now); });
  }
  handle_orphans(self, own_pgrp, child->pid);
  out_.ended = clock_.system_now();
  for (const auto& e : sampler_.finish(out_.ended)) emit_event(sampling::format_event_line(e));
  if (auto line = pressure_.finish(out_.ended)) emit_event(*line);
  sink_.sync();
  report_file_failures();
  for (auto* f : {&thermal_, &events_}) {
    if (f->buffered_rows() > 0) f->retry();
    (void)f->sync();
  }
  out_.exit_code = exit_code_from_wait_status(status);
  if (WIFSIGNALED(status)) out_.term_signal = WTERMSIG(status);
  out_.output_bytes = sink_.bytes();
  out_.files_failed = sink_.files_failed();
  out_.series = tracker_.finish();
  out_.live_baseline_seconds = slowdown_.baseline_seconds();
  out_.last_seconds = slowdown_.last_seconds();
  if (out_.tail.size() > options_.tail_bytes)
    out_.tail.erase(0, out_.tail.size() - options_.tail_bytes);
  return std::move(out_);
}

}  // namespace

Result<WatchOutcome> run_watch_session(const Console& io, const host::HostRoot& root,
                                       const WatchOptions& options, gpu::GpuSource* gpu,
                                       Clock& clock, WatchSignalFlags& flags) {
  std::filesystem::path sidecar = options.log;
  sidecar += ".times";
  auto sink = OutputSink::open(options.log, sidecar, options.appender.trust);
  if (!sink) return tl::unexpected(sink.error());
  sink->set_max_bytes(options.max_log_bytes);
  sampling::SampleOptions sample;
  sample.out = (options.dir / "thermal.log").string();
  sample.format = options.format;
  sample.appender = options.appender;
  const sampling::FileMeta meta = sampling::make_file_meta(root, gpu, std::string(kVersion));
  auto thermal = sampling::open_sample_file(sample, meta, nullptr);
  if (!thermal) return tl::unexpected(thermal.error());
  auto events = sampling::open_events_file((options.dir / "events.log").string(), sample, nullptr);
  if (!events) return tl::unexpected(events.error());
  Session session(io, root, options, gpu, clock, flags, std::move(*sink), std::move(*thermal),
                  std::move(*events));
  return session.run();
}

}  // namespace sparkops::watch
