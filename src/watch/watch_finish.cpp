#include "watch/watch_finish.hpp"

#include <signal.h>

#include <cstdlib>
#include <ctime>

#include <fmt/format.h>

#include "base/file_io.hpp"
#include "base/json_text.hpp"
#include "base/output_file.hpp"
#include "base/time_format.hpp"
#include "base/units.hpp"
#include "base/utf8.hpp"
#include "diagnose/thermal_log.hpp"
#include "host/kernel_log.hpp"
#include "host/meminfo.hpp"
#include "ladder/ladder_advice.hpp"
#include "ladder/oom_classifier.hpp"
#include "ladder/oom_render.hpp"
#include "trainlog/parse_log.hpp"
#include "watch/watch_summary.hpp"

namespace sparkops::watch {

namespace {

// One line appended to `path` with base/output_file.hpp's rules (never through a symlink).
Status append_line(const std::filesystem::path& path, std::string_view line, OutputTrust trust) {
  auto fd = open_output_append(path, trust);
  if (!fd) return tl::unexpected(fd.error());
  return write_all(fd->get(), std::string(line) + "\n", path);
}

std::chrono::seconds local_utc_offset(SystemTime t) {
  const std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm local{};
  ::localtime_r(&tt, &local);
  return std::chrono::seconds{local.tm_gmtoff};
}

// The series as `analyze` reads it back (the log and its sidecar), else the live parse. When the
// live parse recognised no format, reading the log again would not either (and costs a pass).
std::optional<trainlog::StepSeries> final_series(const WatchOptions& o, const WatchOutcome& out) {
  if (!out.series) return std::nullopt;
  if (!out.files_failed) {
    trainlog::ParseOptions p;
    if (auto s = trainlog::parse_log_file(o.log, p)) return std::move(*s);
  }
  return out.series;
}

std::optional<diagnose::Diagnosis> diagnose_run(const diagnose::DiagnoseOptions& d,
                                                const WatchOptions& o, const WatchOutcome& out,
                                                const std::optional<trainlog::StepSeries>& series) {
  if (!series || series->steps.empty()) return std::nullopt;
  diagnose::ThermalReadOptions read;
  read.tz_offset = local_utc_offset(out.started);
  auto thermal = diagnose::read_thermal_log(o.dir / "thermal.log", read);
  return diagnose::diagnose(*series, thermal && !thermal->samples.empty() ? &*thermal : nullptr, d);
}

std::optional<ladder::LadderContext> ladder_context(const FinishInput& in) {
  ladder::LadderContext c;
  if (in.plan != nullptr) {
    c.method = in.plan->run.method;
    c.batch = in.plan->run.batch;
  }
  return c;
}

std::optional<ladder::PlannedRun> planned_run(const FinishInput& in) {
  if (in.plan == nullptr) return std::nullopt;
  return ladder::planned_run_of(*in.plan, in.model_arg);
}

}  // namespace

std::vector<std::string> preflight_warnings(const status::StatusReport& report) {
  std::vector<std::string> out;
  if (report.pool && report.pool->flush_suggested) {
    out.push_back(fmt::format(
        "warning: free now ({}) is far below available ({}): the page cache holds {}; "
        "flush it before a big load: sudo sparkops flush",
        format_bytes(report.pool->free_now_bytes), format_bytes(report.pool->available_bytes),
        format_bytes(report.pool->reclaimable_bytes)));
  }
  if (report.workloads) {
    for (const auto& w : *report.workloads) {
      if (!w.heavy) continue;  // heavy = uncapped or near capacity (workloads/scan.hpp)
      out.push_back(fmt::format(
          "warning: heavy GPU workload running: PID {} {} ({}, {}{}); one heavy job at a "
          "time — stop it or cap it first (sparkops procs)",
          w.pid, w.kind, w.name,
          w.claim_bytes ? fmt::format("claims {}", format_bytes(*w.claim_bytes))
                        : std::string("uncapped"),
          w.actual_bytes ? fmt::format(", holds {}", format_bytes(*w.actual_bytes))
                         : std::string()));
    }
  }
  return out;
}

std::optional<ladder::OomReport> oom_verdict(const WatchOutcome& outcome,
                                             const host::HostRoot& root) {
  std::optional<ladder::OomReport> report;
  if (!outcome.tail.empty()) {
    ladder::OomClassifier classifier;
    classifier.feed(outcome.tail);
    if (auto r = classifier.finish(); r && r->kind != ladder::OomKind::not_oom) report = *r;
  }
  const bool sigkill = outcome.term_signal == SIGKILL && !outcome.killed_by_watch;
  if (report || !sigkill) return report;
  ladder::OomReport inferred;
  inferred.kind = ladder::OomKind::host_oom_killer;
  inferred.evidence = ladder::Evidence::inferred;
  inferred.evidence_text = "exit 137 (SIGKILL), no OOM message in the output";
  inferred.process_pid = static_cast<std::uint32_t>(outcome.pid);
  if (auto log = host::read_kernel_log(root, 1 << 20); log && *log) {
    std::string text;
    for (const auto& r : (*log)->records) {
      text += r.message;
      text += '\n';
    }
    ladder::OomClassifier kernel;
    kernel.feed(text);
    if (auto r = kernel.finish(); r && r->process_pid &&
                                  *r->process_pid == static_cast<std::uint32_t>(outcome.pid) &&
                                  (r->kind == ladder::OomKind::host_oom_killer ||
                                   r->kind == ladder::OomKind::cgroup_oom_killer)) {
      return *r;
    }
  }
  return inferred;
}

std::optional<plan::Anchor> measured_anchor(const plan::PlanResult& plan,
                                            const WatchOutcome& outcome, std::size_t steps,
                                            SystemTime now) {
  const auto peak = outcome.peak_over_launch_bytes();
  if (!peak || *peak == 0) return std::nullopt;
  plan::Anchor a;
  a.id = fmt::format("watch-{}", format_compact_utc(now));
  a.model = plan.model.shape.name;
  a.params = plan.estimate.params;
  a.method = plan.run.method;
  a.kind = plan::AnchorKind::measured_peak;
  a.peak_pool_bytes = peak;
  a.batch = plan.run.batch;
  a.seq = plan.run.seq;
  a.source = "watch";
  a.note = fmt::format("sparkops watch: peak pool use over launch, exit {}, {} step(s)",
                       outcome.exit_code, steps);
  return a;
}

void finish_watch(const Console& io, const host::HostRoot& root, const FinishInput& in) {
  const WatchOutcome& out = *in.outcome;
  WatchSummaryView view;
  view.command = in.options->command;
  view.dir = in.options->dir.string();
  const OutputTrust trust = in.options->appender.trust;
  view.log = in.options->log.string();
  view.outcome = &out;
  view.series = final_series(*in.options, out);
  view.diagnosis = diagnose_run(in.diagnose, *in.options, out, view.series);
  if (in.plan != nullptr) view.plan_peak_bytes = in.plan->estimate.peak_pool_bytes();
  view.oom = oom_verdict(out, root);
  view.notes = in.preflight_warnings;
  view.notes.insert(view.notes.end(), out.warnings.begin(), out.warnings.end());

  std::optional<std::string> advice_text;
  if (view.oom) {
    ladder::OomView ov;
    ov.report = view.oom;
    ov.state_path = in.ladder_state;
    if (auto loaded = ladder::load_ladder_state(in.ladder_state)) {
      ov.state = std::move(*loaded);
      ov.state_saved = true;
    } else {
      ov.state.created = out.ended;
    }
    ov.ctx = *ladder_context(in);
    ladder::AdviceInput ai;
    ai.report = ov.report;
    ai.state = ov.state;
    ai.ctx = ov.ctx;
    ai.planned = planned_run(in);
    if (auto pool = host::read_pool(root, in.pool)) ai.pool = *pool;
    ov.advice = ladder::advise_oom(ai);
    view.next_step = ov.advice.next;
    advice_text = ladder::render_oom_text(ov);
  }

  if (in.plan != nullptr && !view.oom) {
    if (auto anchor = measured_anchor(*in.plan, out, view.series ? view.series->steps.size() : 0,
                                      out.ended)) {
      const auto& path = in.anchor_file;
      std::error_code ec;
      if (!path.empty()) std::filesystem::create_directories(path.parent_path(), ec);
      if (!path.empty()) {
        const auto appended = append_line(path, plan::anchor_to_jsonl(*anchor), trust);
        if (appended) {
          view.anchor_file = path.string();
        } else {
          const std::string warning =
              fmt::format("could not append the measured anchor: {}", appended.error().detail);
          print_error(io, warning);
          view.notes.push_back(warning);
        }
      }
    }
  }

  auto json = watch_summary_json(view);
  const auto summary_path = in.options->dir / "summary.json";
  if (auto written = write_file_atomic(summary_path, dump_document(json) + "\n", trust); !written) {
    // Not in summary.json (it was not written), but in the --json document on stderr.
    print_error(io, written.error().detail);
    json["notes"].push_back(written.error().detail);
  }
  if (advice_text)
    fmt::print(io.err, "sparkops: the job died of an OOM; the ladder's next step:\n{}",
               terminal_text(*advice_text));
  if (in.json) {
    fmt::print(io.err, "{}\n", dump_document(json));
  } else {
    fmt::print(io.err, "{}", terminal_text(render_watch_summary_text(view)));
  }
  std::fflush(io.err);
}

}  // namespace sparkops::watch
