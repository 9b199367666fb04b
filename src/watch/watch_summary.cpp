#include "watch/watch_summary.hpp"

#include <cstring>

#include <fmt/format.h>

#include "base/json_text.hpp"
#include "base/time_format.hpp"
#include "base/units.hpp"

namespace sparkops::watch {

namespace {

std::string joined(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    out += a;
  }
  return out;
}

double seconds_between(SystemTime a, SystemTime b) {
  return std::chrono::duration<double>(b - a).count();
}

std::string step_range(const diagnose::Slowdown& s) {
  return s.start_step == s.end_step ? fmt::format("step {}", s.start_step)
                                    : fmt::format("steps {}-{}", s.start_step, s.end_step);
}

}  // namespace

std::string describe_exit(const WatchOutcome& o) {
  if (o.term_signal) {
    const char* abbrev = sigabbrev_np(*o.term_signal);
    return fmt::format("killed by signal {} (SIG{}){}", *o.term_signal, abbrev ? abbrev : "?",
                       o.killed_by_watch ? ", sent by sparkops after the second Ctrl-C" : "");
  }
  return fmt::format("exited with status {}", o.exit_code);
}

std::string render_watch_summary_text(const WatchSummaryView& v) {
  const WatchOutcome& o = *v.outcome;
  std::string s = "sparkops watch: summary\n";
  const auto row = [&s](std::string_view key, const std::string& value) {
    s += fmt::format("  {:<11} {}\n", key, value);
  };
  row("command", joined(v.command));
  row("exit", fmt::format("{} ({})", o.exit_code, describe_exit(o)));
  row("duration",
      format_duration(std::chrono::duration_cast<std::chrono::nanoseconds>(o.ended - o.started)));
  row("files", fmt::format("{} (+ .times), {}/thermal.log, {}/events.log{}", v.log, v.dir, v.dir,
                           o.files_failed ? " (log incomplete: a write failed)" : ""));
  row("output", fmt::format("{} bytes", o.output_bytes));
  if (v.series) {
    row("steps", fmt::format("{} ({} format)", v.series->steps.size(),
                             trainlog::format_name(v.series->format)));
  } else {
    row("steps", "none recognised in the output");
  }
  std::optional<double> baseline = v.diagnosis ? v.diagnosis->baseline_seconds : std::nullopt;
  if (!baseline) baseline = o.live_baseline_seconds;
  row("step time",
      fmt::format(
          "baseline {}, final {}",
          baseline ? fmt::format("{:.3f} s/step", *baseline) : std::string("unknown"),
          o.last_seconds ? fmt::format("{:.3f} s/step", *o.last_seconds) : std::string("unknown")));
  if (v.diagnosis && !v.diagnosis->slowdowns.empty()) {
    row("slowdowns", fmt::format("{}", v.diagnosis->slowdowns.size()));
    for (const auto& sd : v.diagnosis->slowdowns) {
      s += fmt::format("    {} at {:.1f}x baseline: {} ({:.0f}% confidence){}\n", step_range(sd),
                       sd.ratio, diagnose::cause_name(sd.cause), sd.confidence * 100.0,
                       sd.explanation.empty() ? std::string() : " — " + sd.explanation);
    }
  } else {
    row("slowdowns", o.slowdown_events > 0 ? fmt::format("{} seen live", o.slowdown_events)
                                           : std::string("none"));
  }
  row("events", fmt::format("{} throttle episode(s), {} memory pressure episode(s), {} sample(s)",
                            o.throttle_episodes, o.pressure_events, o.samples));
  std::string mem =
      o.peak_over_launch_bytes()
          ? fmt::format("peak pool use {} over launch", format_bytes(*o.peak_over_launch_bytes()))
          : std::string("pool use not measured");
  if (o.peak_gpu_process_bytes)
    mem += fmt::format(", GPU-resident peak {}", format_bytes(*o.peak_gpu_process_bytes));
  if (v.plan_peak_bytes) mem += fmt::format("; plan estimate {}", format_bytes(*v.plan_peak_bytes));
  row("memory", mem);
  if (v.anchor_file) row("anchor", fmt::format("measured peak appended to {}", *v.anchor_file));
  if (v.oom) {
    row("oom",
        fmt::format("{} ({}, {}){}", ladder::oom_kind_name(v.oom->kind),
                    ladder::oom_phase_name(v.oom->phase),
                    v.oom->evidence == ladder::Evidence::stated ? "stated" : "inferred",
                    v.oom->evidence_text.empty() ? std::string() : ": " + v.oom->evidence_text));
    if (v.next_step) {
      row("next step", fmt::format("{} {}: {}", ladder::step_id(v.next_step->step),
                                   ladder::step_title(v.next_step->step), v.next_step->action));
    }
  }
  return s;
}

nlohmann::ordered_json watch_summary_json(const WatchSummaryView& v) {
  const WatchOutcome& o = *v.outcome;
  nlohmann::ordered_json j;
  j["command"] = v.command;
  j["exit_code"] = o.exit_code;
  j["signal"] = json_or_null<nlohmann::ordered_json>(o.term_signal);
  j["killed_by_watch"] = o.killed_by_watch;
  j["started"] = format_iso8601_utc_ms(o.started);
  j["ended"] = format_iso8601_utc_ms(o.ended);
  j["duration_seconds"] = seconds_between(o.started, o.ended);
  j["dir"] = v.dir;
  j["log"] = v.log;
  j["output_bytes"] = o.output_bytes;
  j["files_failed"] = o.files_failed;
  j["format"] = v.series ? nlohmann::ordered_json(trainlog::format_name(v.series->format))
                         : nlohmann::ordered_json(nullptr);
  j["steps"] = v.series ? v.series->steps.size() : 0;
  std::optional<double> baseline = v.diagnosis ? v.diagnosis->baseline_seconds : std::nullopt;
  if (!baseline) baseline = o.live_baseline_seconds;
  // The names `analyze --json` uses for the same figures (docs/json.md).
  j["baseline_step_seconds"] = json_or_null<nlohmann::ordered_json>(baseline);
  j["final_step_seconds"] = json_or_null<nlohmann::ordered_json>(o.last_seconds);
  auto slowdowns = nlohmann::ordered_json::array();
  if (v.diagnosis) {
    for (const auto& sd : v.diagnosis->slowdowns) {
      slowdowns.push_back({{"start", sd.start_step},
                           {"end", sd.end_step},
                           {"median_step_seconds", sd.median_seconds},
                           {"ratio", sd.ratio},
                           {"cause", diagnose::cause_name(sd.cause)},
                           {"confidence", sd.confidence},
                           {"explanation", sd.explanation}});
    }
  }
  j["slowdowns"] = slowdowns;
  j["live_slowdown_events"] = o.slowdown_events;
  j["throttle_episodes"] = o.throttle_episodes;
  j["memory_pressure_episodes"] = o.pressure_events;
  j["samples"] = o.samples;
  j["launch_used_bytes"] = json_or_null<nlohmann::ordered_json>(o.launch_used_bytes);
  j["peak_used_bytes"] = json_or_null<nlohmann::ordered_json>(o.peak_used_bytes);
  j["peak_over_launch_bytes"] = json_or_null<nlohmann::ordered_json>(o.peak_over_launch_bytes());
  j["peak_gpu_process_bytes"] = json_or_null<nlohmann::ordered_json>(o.peak_gpu_process_bytes);
  j["plan_peak_bytes"] = json_or_null<nlohmann::ordered_json>(v.plan_peak_bytes);
  j["anchor_file"] = json_or_null<nlohmann::ordered_json>(v.anchor_file);
  auto orphans = nlohmann::ordered_json::array();
  for (const auto& p : o.orphans) {
    orphans.push_back({{"pid", p.pid}, {"comm", p.comm}, {"pgrp", p.pgrp}, {"session", p.session}});
  }
  j["orphans"] = orphans;
  j["notes"] = v.notes;
  if (o.orphans_ended) {
    auto survivors = nlohmann::ordered_json::array();
    for (const auto& p : o.orphans_ended->survivors) survivors.push_back(p.pid);
    j["orphans_ended"] = {{"terminated", o.orphans_ended->terminated},
                          {"killed", o.orphans_ended->killed},
                          {"survivors", survivors}};
  } else {
    j["orphans_ended"] = nullptr;
  }
  if (v.oom) {
    j["oom"] = {{"kind", ladder::oom_kind_name(v.oom->kind)},
                {"phase", ladder::oom_phase_name(v.oom->phase)},
                {"evidence", v.oom->evidence == ladder::Evidence::stated ? "stated" : "inferred"},
                {"evidence_text", v.oom->evidence_text}};
    j["next_step"] = v.next_step
                         ? nlohmann::ordered_json({{"id", ladder::step_id(v.next_step->step)},
                                                   {"name", ladder::step_name(v.next_step->step)},
                                                   {"action", v.next_step->action},
                                                   {"commands", v.next_step->commands}})
                         : nlohmann::ordered_json(nullptr);
  } else {
    j["oom"] = nullptr;
    j["next_step"] = nullptr;
  }
  return j;
}

}  // namespace sparkops::watch
