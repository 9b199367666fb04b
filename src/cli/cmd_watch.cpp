// `sparkops watch [options] -- CMD ...`: run a training job with the pre-flight, the sampler, live
// throttle/slowdown/pressure events, the step series and, when it dies of an OOM, the ladder's next
// step (docs/watch.md). The job's exit status is passed through exactly.

#include <cstdlib>
#include <ctime>
#include <memory>

#include <fmt/format.h>

#include "base/clock.hpp"
#include "base/file_io.hpp"
#include "base/output_file.hpp"
#include "base/time_format.hpp"
#include "base/units.hpp"
#include "base/utf8.hpp"
#include "cli/commands.hpp"
#include "cli/common_options.hpp"
#include "cli/plan_flags.hpp"
#include "cli/serve_plan.hpp"
#include "cli/watch_signals.hpp"
#include "plan/plan_render.hpp"
#include "sampling/sample_run.hpp"
#include "status/status_render.hpp"
#include "status/status_report.hpp"
#include "watch/run_folder.hpp"
#include "watch/watch_finish.hpp"
#include "watch/watch_session.hpp"
#include "watch/watch_summary.hpp"

namespace sparkops::cli {

namespace {

struct WatchFlags {
  std::vector<std::string> command;
  std::string dir;
  std::string log;
  std::string interval;
  std::string format = "nvidia-smi";
  std::string ladder_state = ".sparkops/ladder.json";
  bool no_preflight = false;
  bool kill_orphans = false;
  bool force = false;
  bool no_pty = false;
  PlanFlags plan;
};

bool plan_requested(const WatchFlags& f) {
  return !f.plan.model.empty() || !f.plan.params.empty();
}

Result<plan::PlanResult> make_watch_plan(const AppContext& ctx, const WatchFlags& f) {
  auto input = plan_input_from_flags(f.plan);
  if (!input) return tl::unexpected(input.error());
  const plan::PlanEnvironment env = plan_environment(ctx.host_root(), ctx.config);
  return plan::make_plan(*input, env);
}

// The pre-flight on stderr. Returns false when the launch is refused (wont_fit without --force).
bool preflight(AppContext& ctx, const WatchFlags& f, GpuSource& gpu,
               const std::optional<plan::PlanResult>& plan) {
  SystemClock clock;
  const HostRoot root = ctx.host_root();
  const StatusReport report =
      collect_status(root, gpu, clock, status_options_for(root, ctx.config));
  fmt::print(ctx.err, "{}", terminal_text(render_status(report)));
  for (const auto& line : preflight_warnings(report)) print_error(ctx, line);
  if (plan) {
    fmt::print(ctx.err, "{}", terminal_text(plan::render_plan_text(*plan)));
    if (plan->verdict == plan::Verdict::wont_fit) {
      if (!f.force) {
        print_error(ctx,
                    "the plan says this run won't fit; not launching (--force launches anyway)");
        return false;
      }
      print_error(ctx, "the plan says this run won't fit; launching anyway (--force)");
    }
    // --beside CMD: the same verdict `plan --beside --beside-running` gives (docs/serving.md).
    if (!f.plan.beside.empty()) {
      const plan::PlanEnvironment env = plan_environment(ctx.host_root(), ctx.config);
      auto sc = serving_context(f.plan, env, ctx.config);
      std::vector<std::string> notes;
      auto jobs = sc ? beside_jobs(f.plan, env, *sc, notes)
                     : Result<std::vector<serving::PlannedJob>>(tl::unexpected(sc.error()));
      auto scan =
          sc ? scan_workloads(env.root, {}, sc->scan) : Result<WorkloadScan>(WorkloadScan{});
      if (!jobs || !scan || !sc->pool) {
        print_error(ctx, fmt::format("--beside: {}", !jobs   ? jobs.error().detail
                                                     : !scan ? scan.error().detail
                                                             : "no live pool"));
        return false;
      }
      const auto job =
          serving::new_training_job("this run", plan->estimate.peak_pool_bytes(), sc->scan);
      CoexistenceOptions co;
      co.tight_margin_bytes = ctx.config.get_bytes("procs.tight_margin");
      const auto v = serving::beside_verdict(&*scan, *jobs, job, *sc->pool, sc->scan, co);
      fmt::print(ctx.err, "{}", terminal_text(render_beside_text(v, *jobs)));
      if (v.verdict.kind == VerdictKind::stop_first ||
          v.verdict.kind == VerdictKind::does_not_fit) {
        if (!f.force) {
          print_error(ctx,
                      "beside the other jobs this run must wait (see above); not launching "
                      "(--force launches anyway)");
          return false;
        }
        print_error(ctx, "beside the other jobs this run must wait; launching anyway (--force)");
      }
    }
  }
  std::fflush(ctx.err);
  return true;
}

Result<WatchOptions> options_from_flags(AppContext& ctx, const WatchFlags& f) {
  WatchOptions o;
  o.command = f.command;
  o.pty = !f.no_pty;
  if (o.command.empty())
    return fail(Errc::invalid_argument, "no command given: sparkops watch [options] -- CMD ...");
  if (f.interval.empty()) {
    o.interval = ctx.config.get_duration("sample.interval");
  } else {
    auto interval = parse_duration(f.interval);
    if (!interval)
      return fail(Errc::invalid_argument,
                  fmt::format("--interval {}: {}", f.interval, interval.error().detail));
    o.interval = *interval;
  }
  if (o.interval < std::chrono::milliseconds{1}) {
    return fail(Errc::invalid_argument,
                fmt::format("--interval {}: must be at least 1ms", f.interval));
  }
  auto format = parse_sample_format(f.format);
  if (!format) return tl::unexpected(format.error());
  o.format = *format;
  const SystemClock clock;
  o.dir = f.dir.empty() ? std::filesystem::path(fmt::format("sparkops-run-{}",
                                                            format_compact_utc(clock.system_now())))
                        : std::filesystem::path(f.dir);
  o.log = f.log.empty() ? o.dir / "train.log" : std::filesystem::path(f.log);
  o.detector = detector_from_config(ctx.config);
  const auto fsync_every = ctx.config.get_integer("sample.fsync_every");
  const auto buffer_rows = ctx.config.get_integer("sample.memory_buffer_rows");
  if (fsync_every < 0 || buffer_rows < 1) {
    return fail(Errc::invalid_argument,
                "sample.fsync_every must be >= 0 and sample.memory_buffer_rows >= 1");
  }
  o.appender.fsync_every = static_cast<std::size_t>(fsync_every);
  o.appender.memory_buffer_rows = static_cast<std::size_t>(buffer_rows);
  o.appender.trust = ctx.output_trust;
  o.max_log_bytes = ctx.config.get_bytes("watch.max_log_bytes");
  o.kill_orphans = f.kill_orphans;
  o.slowdown.slowdown_factor = ctx.config.get_number("analyze.slowdown_factor");
  o.slowdown.sustain_steps = ctx.config.get_integer("analyze.sustain_steps");
  o.slowdown.min_wall_share = ctx.config.get_number("analyze.min_wall_share");
  o.slowdown.noise_sigmas = ctx.config.get_number("analyze.noise_sigmas");
  o.slowdown.warmup_steps = ctx.config.get_integer("analyze.warmup_steps");
  return o;
}

void run_watch(AppContext& ctx, const WatchFlags& f) {
  const auto bad = [&](std::string_view message) {
    print_error(ctx, message);
    ctx.exit_code = kExitBadInput;
  };
  auto options = options_from_flags(ctx, f);
  if (!options) return bad(options.error().detail);
  auto gpu = open_gpu_for(ctx);
  if (!gpu) return bad(gpu.error().detail);
  std::optional<plan::PlanResult> plan;
  if (plan_requested(f)) {
    auto made = make_watch_plan(ctx, f);
    if (!made) return bad(made.error().detail);
    plan = std::move(*made);
  }
  if (!f.no_preflight && !preflight(ctx, f, **gpu, plan)) {
    ctx.exit_code = kExitFailure;
    return;
  }
  if (f.dir.empty()) {  // the default folder: one per run, even two in the same second
    auto fresh = create_fresh_run_folder(options->dir);
    if (!fresh) return bad(fresh.error().detail);
    options->dir = *fresh;
    if (f.log.empty()) options->log = options->dir / "train.log";
  }
  std::error_code ec;
  std::filesystem::create_directories(options->dir, ec);
  if (ec)
    return bad(
        fmt::format("{}: cannot create the run folder: {}", options->dir.string(), ec.message()));
  if (options->log.has_parent_path())
    std::filesystem::create_directories(options->log.parent_path(), ec);
  // A symlinked or shared run folder is refused before anything is announced or started (the
  // files themselves are checked again when opened: base/output_file.hpp).
  for (const auto& dir : {options->dir, output_parent(options->log)}) {
    if (auto checked = open_output_dir(dir, ctx.output_trust); !checked)
      return bad(checked.error().detail);
  }

  print_error(
      ctx,
      fmt::format("watching `{}`: output to {} (+ .times), samples every {} to {}/thermal.log, "
                  "events to {}/events.log; Ctrl-C forwards, a second Ctrl-C kills",
                  f.command.front(), options->log.string(), format_duration(options->interval),
                  options->dir.string(), options->dir.string()));
  std::fflush(ctx.err);
  const HostRoot root = ctx.host_root();
  WatchSignalFlags signal_flags;
  ScopedWatchSignals signals(signal_flags);
  SystemClock clock;
  auto outcome = run_watch_session(ctx, root, *options, gpu->get(), clock, signal_flags);
  if (!outcome) {
    print_error(ctx, outcome.error().detail);
    ctx.exit_code = outcome.error().code == Errc::not_found           ? 127
                    : outcome.error().code == Errc::permission_denied ? 126
                                                                      : kExitBadInput;
    return;
  }
  FinishInput in;
  in.options = &*options;
  in.outcome = &*outcome;
  in.plan = plan ? &*plan : nullptr;
  in.model_arg = f.plan.model.empty() ? fmt::format("--params {}", f.plan.params) : f.plan.model;
  in.diagnose = diagnose_options_from_config(ctx.config);
  in.pool = pool_options_from_config(ctx.config);
  in.anchor_file = user_anchor_file();
  in.ladder_state = f.ladder_state;
  in.json = ctx.json;
  finish_watch(ctx, root, in);
  ctx.exit_code = outcome->exit_code;
}

}  // namespace

void add_watch_command(CLI::App& app, AppContext& ctx) {
  auto flags = std::make_shared<WatchFlags>();
  auto* cmd = app.add_subcommand(
      "watch",
      "Run a training job (sparkops watch [options] -- CMD ...) with the pre-flight, sampling, "
      "live "
      "throttle/slowdown events and the OOM ladder; exits with the job's status");
  cmd->add_option("--dir", flags->dir, "Run folder (default ./sparkops-run-<UTC time>)")
      ->type_name("DIR");
  cmd->add_option("--log", flags->log,
                  "The job's output, both streams (default DIR/train.log; sidecar FILE.times)")
      ->type_name("FILE");
  cmd->add_option("--interval", flags->interval,
                  "Seconds between samples: 30, 0.5, 30s (default: config sample.interval)")
      ->type_name("DURATION");
  cmd->add_option("--format", flags->format, "thermal.log format: nvidia-smi, extended or jsonl")
      ->type_name("FORMAT");
  cmd->add_option("--ladder-state", flags->ladder_state,
                  "OOM ladder state file read for the next step")
      ->type_name("FILE");
  cmd->add_flag("--kill-orphans", flags->kill_orphans,
                "When the job exits, end the processes it left running (its process group and "
                "everything it started below watch, setsid included): SIGTERM, SIGKILL after 10 s");
  cmd->add_flag("--no-preflight", flags->no_preflight,
                "Skip the status summary, plan and warnings before launch");
  cmd->add_flag("--force", flags->force, "Launch even when the plan says the run won't fit");
  cmd->add_flag(
      "--no-pty", flags->no_pty,
      "Give the job pipes instead of pseudo-terminals (by default its stdout and stderr "
      "are terminals of the real size, so print loops stream line by line and tqdm draws)");
  add_plan_flags(cmd, flags->plan);
  // MODEL is a positional in `plan`; here positionals are the command, so the model is --model.
  if (auto* model = cmd->get_option_no_throw("MODEL")) cmd->remove_option(model);
  cmd->add_option(
         "--model", flags->plan.model,
         "Plan this model first, as `sparkops plan MODEL` (offline: local or cached models)")
      ->type_name("MODEL");
  cmd->add_option("CMD", flags->command, "The job and its arguments, after --")->required();
  cmd->callback([&ctx, flags] { run_watch(ctx, *flags); });
}

}  // namespace sparkops::cli
