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
#include "cli/plan_flags.hpp"
#include "cli/signal_bridge.hpp"
#include "options/domain_options.hpp"
#include "options/gpu_choice.hpp"
#include "sampling/sample_run.hpp"
#include "status/status_report.hpp"
#include "watch/run_folder.hpp"
#include "watch/watch_finish.hpp"
#include "watch/watch_options.hpp"
#include "watch/watch_preflight.hpp"
#include "watch/watch_session.hpp"
#include "watch/watch_summary.hpp"

namespace sparkops::cli {

namespace {

struct WatchFlags : watch::WatchArgs {
  std::string ladder_state = ".sparkops/ladder.json";
  bool no_preflight = false;
  bool force = false;
  PlanFlags plan;
};

bool plan_requested(const WatchFlags& f) {
  return !f.plan.model.empty() || !f.plan.params.empty();
}

void run_watch(AppContext& ctx, const WatchFlags& f) {
  const auto bad = [&](std::string_view message) {
    print_error(ctx, message);
    ctx.exit_code = kExitBadInput;
  };
  auto options = watch::watch_options(f, ctx.config, ctx.output_trust, SystemClock().system_now());
  if (!options) return bad(options.error().detail);
  auto source = options::status_source(ctx.host_root(), ctx.gpu.backend, ctx.config);
  if (!source) return bad(source.error().detail);
  const host::HostRoot& root = source->root;
  gpu::GpuSource& gpu = *source->gpu;
  std::optional<plan::PlanEnvironment> env;
  std::optional<plan::PlanResult> plan;
  if (plan_requested(f)) {
    auto input = plan::plan_input(f.plan);
    if (!input) return bad(input.error().detail);
    env = options::plan_environment(root, ctx.config);
    // On a discrete GPU the budget is the card's free memory, as `plan` reads it.
    if (!input->budget_bytes) env->device_memory = status::read_gpu_memory(gpu).device;
    auto made = plan::make_plan(*input, *env);
    if (!made) return bad(made.error().detail);
    plan = std::move(*made);
  }
  std::vector<std::string> preflight_warnings;
  if (!f.no_preflight) {
    watch::PreflightInput in;
    in.root = root;
    in.status = source->options;
    in.plan = plan ? &*plan : nullptr;
    in.env = env ? &*env : nullptr;
    in.serving = &f.plan.serving;
    in.budget = &f.plan;
    in.heavy = options::heavy_rules_from_config(ctx.config);
    in.coexistence = options::coexistence_options_from_config(ctx.config);
    in.force = f.force;
    in.warnings = &preflight_warnings;
    SystemClock clock;
    if (!watch::run_preflight(ctx, in, gpu, clock)) {
      ctx.exit_code = kExitFailure;
      return;
    }
  }
  if (auto ready =
          watch::prepare_run_folder(*options, f.dir.empty(), f.log.empty(), ctx.output_trust);
      !ready)
    return bad(ready.error().detail);

  print_error(
      ctx,
      fmt::format("watching `{}`: output to {} (+ .times), samples every {} to {}/thermal.log, "
                  "events to {}/events.log; Ctrl-C forwards, a second Ctrl-C kills",
                  f.command.front(), options->log.string(), format_duration(options->interval),
                  options->dir.string(), options->dir.string()));
  std::fflush(ctx.err);
  WatchSignals signals;
  SystemClock clock;
  auto outcome = watch::run_watch_session(ctx, root, *options, &gpu, clock, signals.flags());
  if (!outcome) {
    print_error(ctx, outcome.error().detail);
    ctx.exit_code = outcome.error().code == Errc::not_found           ? 127
                    : outcome.error().code == Errc::permission_denied ? 126
                                                                      : kExitBadInput;
    return;
  }
  watch::FinishInput in;
  in.options = &*options;
  in.outcome = &*outcome;
  in.plan = plan ? &*plan : nullptr;
  in.model_arg = ladder::model_arg_of(f.plan);
  in.diagnose = options::diagnose_options_from_config(ctx.config);
  in.pool = source->options.pool;
  in.anchor_file = options::user_anchor_file();
  in.ladder_state = f.ladder_state;
  in.json = ctx.json;
  in.preflight_warnings = std::move(preflight_warnings);
  watch::finish_watch(ctx, root, in);
  ctx.exit_code = outcome->exit_code;
}

}  // namespace

void add_watch_command(CommandTree& tree, AppContext& ctx) {
  auto flags = std::make_shared<WatchFlags>();
  auto* cmd = tree.add(
      "watch",
      "Run a training job (sparkops watch [options] -- CMD ...) with the pre-flight, sampling, "
      "live "
      "throttle/slowdown events and the OOM ladder; exits with the job's status");
  if (cmd == nullptr) return;
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
