#include "watch/watch_options.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "base/time_format.hpp"
#include "config/run_sections.hpp"
#include "config/slowdown_thresholds.hpp"
#include "options/domain_options.hpp"
#include "sampling/sample_run.hpp"

namespace sparkops::watch {

Result<WatchOptions> watch_options(const WatchArgs& args, const config::Config& config,
                                   OutputTrust trust, SystemTime now) {
  WatchOptions o;
  o.command = args.command;
  o.pty = !args.no_pty;
  if (o.command.empty())
    return fail(Errc::invalid_argument, "no command given: sparkops watch [options] -- CMD ...");
  auto interval =
      sampling::sample_interval(args.interval, config::sample_settings(config).interval);
  if (!interval) return tl::unexpected(interval.error());
  o.interval = *interval;
  auto format = sampling::parse_sample_format(args.format);
  if (!format) return tl::unexpected(format.error());
  o.format = *format;
  o.dir = args.dir.empty()
              ? std::filesystem::path(fmt::format("sparkops-run-{}", format_compact_utc(now)))
              : std::filesystem::path(args.dir);
  o.log = args.log.empty() ? o.dir / "train.log" : std::filesystem::path(args.log);
  o.detector = sampling::detector_from_config(config);
  auto appender = options::appender_options_from_config(config, trust);
  if (!appender) return tl::unexpected(appender.error());
  o.appender = std::move(*appender);
  o.max_log_bytes = config::watch_settings(config).max_log_bytes;
  o.kill_orphans = args.kill_orphans;
  o.slowdown.slowdown = config::slowdown_thresholds(config);
  return o;
}

}  // namespace sparkops::watch
