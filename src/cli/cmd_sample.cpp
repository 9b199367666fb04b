#include <signal.h>

#include <memory>
#include <stop_token>

#include <fmt/format.h>

#include "base/clock.hpp"
#include "base/units.hpp"
#include "cli/commands.hpp"
#include "cli/signal_bridge.hpp"
#include "config/run_sections.hpp"
#include "options/domain_options.hpp"
#include "options/gpu_choice.hpp"
#include "sampling/sample_run.hpp"

namespace sparkops::cli {

namespace {

struct SampleFlags {
  std::string interval;
  std::string out = "thermal.log";
  std::string format = "nvidia-smi";
  std::string events;
  std::uint64_t count = 0;
  std::string duration;
};

void run_sample_command(AppContext& ctx, const SampleFlags& flags) {
  sampling::SampleOptions options;
  const auto bad = [&](std::string_view message) {
    print_error(ctx, message);
    ctx.exit_code = kExitBadInput;
  };
  auto interval =
      sampling::sample_interval(flags.interval, config::sample_settings(ctx.config).interval);
  if (!interval) return bad(interval.error().detail);
  options.interval = *interval;
  auto format = sampling::parse_sample_format(flags.format);
  if (!format) return bad(format.error().detail);
  options.format = *format;
  if (flags.out.empty()) return bad("--out: empty path (use - for stdout)");
  options.out = flags.out;
  options.events = flags.events;
  if (flags.count > 0) options.limits.count = flags.count;
  if (!flags.duration.empty()) {
    auto duration = parse_duration(flags.duration);
    if (!duration)
      return bad(fmt::format("--duration {}: {}", flags.duration, duration.error().detail));
    options.limits.duration = *duration;
  }
  if (ctx.json && options.out == "-")
    return bad("--json prints a summary on stdout: give --out FILE");
  options.json = ctx.json;
  options.detector = sampling::detector_from_config(ctx.config);
  auto appender = options::appender_options_from_config(ctx.config, ctx.output_trust);
  if (!appender) return bad(appender.error().detail);
  options.appender = std::move(*appender);

  auto gpu = options::open_gpu_for(ctx.host_root(), ctx.gpu.backend, ctx.config);
  if (!gpu) return bad(gpu.error().detail);

  // What the signal thread writes outlives it (declared first, destroyed last).
  std::stop_source stop;
  sampling::SampleSignalFlags flags_from_signals;
  // The GPU watchdog's worker already blocks every signal; no other thread runs yet.
  SignalThread signals({SIGINT, SIGTERM, SIGHUP});
  signals.watch([&](int signo) {
    if (signo == SIGHUP) {
      flags_from_signals.reopen = true;
    } else {
      stop.request_stop();
    }
  });
  SystemClock clock;
  ctx.exit_code = sampling::run_sample(ctx, ctx.host_root(), options, gpu->get(), clock,
                                       stop.get_token(), flags_from_signals);
}

}  // namespace

void add_sample_command(CommandTree& tree, AppContext& ctx) {
  auto flags = std::make_shared<SampleFlags>();
  auto* cmd = tree.add(
      "sample",
      "Sample GPU temperature/power (and host thermals, memory, pressure) beside a training run, "
      "log throttle events; runs until Ctrl-C/SIGTERM (SIGHUP reopens the files)");
  if (cmd == nullptr) return;
  cmd->add_option("--interval", flags->interval,
                  "Seconds between samples: 30, 0.5, 30s, 1m (default: config sample.interval)")
      ->type_name("DURATION");
  cmd->add_option("--out", flags->out, "Sample file, appended to (- for stdout)")
      ->type_name("FILE");
  cmd->add_option("--format", flags->format,
                  "nvidia-smi (the skill's thermal-sample.sh CSV), extended or jsonl")
      ->type_name("FORMAT");
  cmd->add_option("--events", flags->events,
                  "Throttle events file (default: <out>.events; - for stderr only)")
      ->type_name("FILE");
  // The range also rejects "-5", which CLI11 would otherwise wrap into a huge unsigned count.
  auto* count = cmd->add_option("--count", flags->count, "Stop after N samples (1 to 10^12)")
                    ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1'000'000'000'000}))
                    ->type_name("N");
  auto* duration = cmd->add_option("--duration", flags->duration, "Stop after this long: 90s, 2h")
                       ->type_name("DURATION");
  count->excludes(duration);
  cmd->callback([&ctx, flags] { run_sample_command(ctx, *flags); });
}

}  // namespace sparkops::cli
