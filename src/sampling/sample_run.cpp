#include "sampling/sample_run.hpp"

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/json_text.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "base/version.hpp"
#include "sampling/sampler.hpp"

namespace sparkops::sampling {

namespace {

constexpr std::string_view kEventsHeader =
    "# sparkops throttle events: <ISO-8601 UTC> start|end cause=<cause> [gpu=<index>] "
    "key=value...\n";

Status check_events_header(std::string_view head, std::string_view path) {
  if (starts_with(head, "# sparkops throttle events")) return {};
  return fail(
      Errc::conflict,
      fmt::format("{}: exists and is not a sparkops events file ({}); "
                  "choose another --events",
                  path,
                  quote_for_message(split_lines(head).empty() ? head : split_lines(head)[0])));
}

// Every warning sample prints on stderr, kept for the --json summary's `notes` (docs/json.md: notes
// carry every warning the text shows).
class Warnings {
 public:
  explicit Warnings(const Console& io) : io_(io) {}
  void say(const std::string& message) {
    print_error(io_, message);
    notes_.push_back(message);
  }
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  const Console& io_;
  std::vector<std::string> notes_;
};

// Prints what an append did, once per failure episode.
class AppendReporter {
 public:
  AppendReporter(Warnings& warn, std::size_t limit) : warn_(warn), limit_(limit) {}
  void report(const DurableAppender& file, const AppendReport& r) {
    if (r.failed_now) {
      warn_.say(fmt::format("{}; keeping rows in memory (up to {}) and retrying",
                            r.failed_now->detail, limit_));
      dropped_reported_ = r.dropped_rows;
    }
    if (r.dropped_rows > dropped_reported_ && !drop_said_) {
      warn_.say(fmt::format("{}: memory buffer full; dropping the oldest unwritten rows",
                            file.path().string()));
      drop_said_ = true;
    }
    if (r.recovered) {
      warn_.say(fmt::format("{}: writing again; buffered rows written{}", file.path().string(),
                            r.dropped_rows > dropped_reported_
                                ? fmt::format(" ({} dropped)", r.dropped_rows - dropped_reported_)
                                : std::string{}));
      dropped_reported_ = r.dropped_rows;
      drop_said_ = false;
    }
  }

 private:
  Warnings& warn_;
  std::size_t limit_;
  std::uint64_t dropped_reported_ = 0;
  bool drop_said_ = false;
};

void say_opened(Warnings& warn, const std::string& path, const OpenReport& r) {
  if (r.torn_bytes_cut > 0 && !r.created) {
    warn.say(fmt::format("{}: cut {} bytes of an incomplete last line (a crash mid-write)", path,
                         r.torn_bytes_cut));
  }
}

}  // namespace

Result<DurableAppender> open_sample_file(const SampleOptions& options, const FileMeta& meta,
                                         OpenReport* report) {
  const std::string path = options.out;
  return DurableAppender::open(
      path, format_file_header(options.format, meta), format_restart_marker(options.format, meta),
      [format = options.format, path](std::string_view head) {
        return check_existing_header(format, head, path);
      },
      options.appender, report);
}

Result<DurableAppender> open_events_file(const std::string& path, const SampleOptions& options,
                                         OpenReport* report) {
  AppenderOptions events_options = options.appender;
  events_options.fsync_every = 1;  // events are rare and worth keeping
  return DurableAppender::open(
      path, std::string(kEventsHeader), "",
      [path](std::string_view head) { return check_events_header(head, path); }, events_options,
      report);
}

DetectorConfig detector_from_config(const config::Config& c) {
  DetectorConfig d;
  static_cast<config::ThermalThresholds&>(d) = config::thermal_thresholds(c);
  return d;
}

Result<std::chrono::nanoseconds> sample_interval(const std::string& text,
                                                 std::chrono::nanoseconds fallback) {
  std::chrono::nanoseconds interval = fallback;
  if (!text.empty()) {
    auto parsed = parse_duration(text);
    if (!parsed)
      return fail(Errc::invalid_argument,
                  fmt::format("--interval {}: {}", text, parsed.error().detail));
    interval = *parsed;
  }
  if (interval < std::chrono::milliseconds{1})
    return fail(Errc::invalid_argument, fmt::format("--interval {}: must be at least 1ms", text));
  return interval;
}

std::string default_events_path(const std::string& out) {
  if (out == "-") return {};
  return out + ".events";
}

int run_sample(const Console& io, const host::HostRoot& root, const SampleOptions& options,
               gpu::GpuSource* gpu, Clock& clock, std::stop_token stop, SampleSignalFlags& flags) {
  const FileMeta meta = make_file_meta(root, gpu, std::string(kVersion));
  const bool to_stdout = options.out == "-";
  const std::string events_path =
      options.events.empty() ? default_events_path(options.out) : options.events;

  Warnings warn(io);
  std::optional<DurableAppender> file;
  if (!to_stdout) {
    OpenReport report;
    auto opened = open_sample_file(options, meta, &report);
    if (!opened) {
      print_error(io, opened.error().detail);
      return kExitBadInput;
    }
    say_opened(warn, options.out, report);
    file.emplace(std::move(*opened));
  } else {
    std::fputs(format_file_header(options.format, meta).c_str(), io.out);
    std::fflush(io.out);
  }
  std::optional<DurableAppender> events;
  if (!events_path.empty() && events_path != "-") {
    OpenReport report;
    auto opened = open_events_file(events_path, options, &report);
    if (!opened) {
      print_error(io, opened.error().detail);
      return kExitBadInput;
    }
    say_opened(warn, events_path, report);
    events.emplace(std::move(*opened));
  }

  const std::string gpu_warning =
      gpu != nullptr && gpu->state() != gpu::GpuState::ok
          ? fmt::format("GPU: {} ({})", gpu::gpu_state_name(gpu->state()), gpu->state_detail())
          : std::string{};
  print_error(io, fmt::format("sampling every {} into {} ({} format){}{}; Ctrl-C stops",
                              format_duration(options.interval), to_stdout ? "stdout" : options.out,
                              sample_format_name(options.format),
                              events ? fmt::format(", events to {} and stderr", events_path)
                                     : std::string(", events to stderr"),
                              gpu_warning.empty() ? std::string{} : "; " + gpu_warning));

  Collector collector(root, gpu);
  Sampler sampler(collector, options.format, options.detector);
  AppendReporter row_reporter(warn, options.appender.memory_buffer_rows);
  AppendReporter event_reporter(warn, options.appender.memory_buffer_rows);
  std::uint64_t ticks = 0, rows = 0, event_count = 0, skipped = 0;

  const auto emit_events = [&](const std::vector<ThrottleEvent>& list) {
    for (const auto& e : list) {
      const std::string line = format_event_line(e);
      fmt::print(io.err, "sparkops: event {}", line);
      if (events) event_reporter.report(*events, events->append(line));
      ++event_count;
    }
  };
  const auto reopen_files = [&] {
    for (auto* f : {file ? &*file : nullptr, events ? &*events : nullptr}) {
      if (f == nullptr) continue;
      auto r = f->reopen();
      if (!r) warn.say(fmt::format("reopen failed: {}", r.error().detail));
    }
  };

  const LoopEnd end =
      run_schedule(clock, options.interval, options.limits, stop, [&](const Tick& t) {
        if (flags.reopen.exchange(false)) reopen_files();
        if (t.skipped_before > 0) {
          warn.say(fmt::format("fell behind: skipped {} tick(s) instead of sampling in a burst",
                               t.skipped_before));
          skipped += t.skipped_before;
        }
        TickResult result = sampler.tick(t);
        for (auto& row : result.rows) {
          if (file) {
            row_reporter.report(*file, file->append(std::move(row)));
          } else {
            std::fputs(row.c_str(), io.out);
            std::fflush(io.out);
          }
          ++rows;
        }
        emit_events(result.events);
        ++ticks;
      });
  emit_events(sampler.finish(clock.system_now()));

  int code = kExitOk;
  std::size_t unwritten = 0;
  for (auto* f : {file ? &*file : nullptr, events ? &*events : nullptr}) {
    if (f == nullptr) continue;
    if (f->buffered_rows() > 0) f->retry();
    if (f->buffered_rows() > 0) {
      warn.say(fmt::format("{}: {} row(s) could not be written before exit", f->path().string(),
                           f->buffered_rows()));
      code = kExitFailure;
      unwritten += f->buffered_rows();
    }
    (void)f->sync();
  }
  // Rows that reached the file, not rows produced: after a disk-full episode the difference is
  // what was dropped from the memory buffer or is still unwritten at exit.
  const std::uint64_t written = file ? file->written_rows() : rows;
  const std::uint64_t dropped = file ? file->dropped_rows() : 0;
  const std::string_view why = end == LoopEnd::stopped         ? "stopped by signal"
                               : end == LoopEnd::count_reached ? "count reached"
                                                               : "duration reached";
  if (options.json) {
    nlohmann::ordered_json doc = {{"file", to_stdout ? "-" : options.out},
                                  {"format", sample_format_name(options.format)},
                                  {"events_file", events ? events_path : ""},
                                  {"ticks", ticks},
                                  {"rows", written},
                                  {"rows_produced", rows},
                                  {"dropped_rows", dropped},
                                  {"events", event_count},
                                  {"skipped_ticks", skipped},
                                  {"end", why},
                                  {"unwritten_rows", unwritten}};
    // The GPU's state first (said in the banner), then every warning in the order printed.
    nlohmann::ordered_json notes = nlohmann::ordered_json::array();
    if (!gpu_warning.empty()) notes.push_back(gpu_warning);
    for (const auto& n : warn.notes()) notes.push_back(n);
    doc["notes"] = std::move(notes);
    fmt::print(io.out, "{}\n", dump_document(doc));
  } else {
    const std::string lost =
        written == rows
            ? std::string()
            : fmt::format(" of {} (not written: {} dropped from the memory buffer, {} at exit)",
                          rows, dropped, rows - written - dropped);
    print_error(io, fmt::format("{}: {} tick(s), {} row(s) written{}, {} event(s) ({})",
                                to_stdout ? "stdout" : options.out, ticks, written, lost,
                                event_count, why));
  }
  return code;
}

}  // namespace sparkops::sampling
