#include "watch/watch_events.hpp"

#include <chrono>

#include <fmt/format.h>

#include "base/time_format.hpp"
#include "base/units.hpp"

namespace sparkops::watch {

std::string thermal_evidence(const sampling::Sample* sample) {
  if (sample == nullptr) return {};
  std::string out;
  const auto add = [&out](std::string_view text) {
    if (!out.empty()) out += ' ';
    out += text;
  };
  if (!sample->gpus.empty()) {
    const gpu::GpuSnapshot& g = sample->gpus.front().snapshot;
    if (g.temp_millicelsius)
      add(fmt::format("gpu_temp_c={}", static_cast<double>(*g.temp_millicelsius) / 1000.0));
    if (g.power_microwatts)
      add(fmt::format("power_w={:.2f}", static_cast<double>(*g.power_microwatts) / 1e6));
    if (g.sm_clock_mhz) add(fmt::format("sm_clock_mhz={}", *g.sm_clock_mhz));
    if (g.util_gpu_percent) add(fmt::format("gpu_util_pct={}", *g.util_gpu_percent));
  }
  if (sample->host.hottest_millicelsius) {
    add(fmt::format("host_hottest_c={}",
                    static_cast<double>(*sample->host.hottest_millicelsius) / 1000.0));
  }
  if (sample->host.mem_available_bytes) {
    add(fmt::format("mem_available_gib={:.1f}", bytes_to_gib(*sample->host.mem_available_bytes)));
  }
  return out;
}

std::string format_slowdown_event(const diagnose::LiveSlowdownEvent& e, SystemTime now,
                                  const sampling::Sample* latest) {
  if (e.edge == diagnose::SlowdownEdge::stall) {
    // A short slow stretch that ended: its own event kind, with the time it cost.
    return fmt::format(
        "{} stall step={} first_step={} seconds={:.3f} baseline_s={:.3f} ratio={:.2f} "
        "duration_s={:.1f}\n",
        format_iso8601_utc_ms(e.time.value_or(now)), e.step, e.first_step, e.seconds,
        e.baseline_seconds, e.ratio, e.stall_seconds);
  }
  std::string line = fmt::format(
      "{} {} cause=slowdown step={} first_step={} seconds={:.3f} baseline_s={:.3f} ratio={:.2f}",
      format_iso8601_utc_ms(e.time.value_or(now)),
      e.edge == diagnose::SlowdownEdge::start ? "start" : "end", e.step, e.first_step, e.seconds,
      e.baseline_seconds, e.ratio);
  const std::string thermal = thermal_evidence(latest);
  if (!thermal.empty()) line += " " + thermal;
  line += '\n';
  return line;
}

std::optional<std::string> PressureTracker::feed(const sampling::Sample& sample) {
  const host::HostReading& h = sample.host;
  std::optional<double> psi_share;
  const auto interval_us =
      std::chrono::duration_cast<std::chrono::microseconds>(sample.interval).count();
  if (sample.host_deltas.psi_mem_some_us && interval_us > 0) {
    psi_share =
        static_cast<double>(*sample.host_deltas.psi_mem_some_us) / static_cast<double>(interval_us);
  }
  std::optional<double> available_share;
  if (h.mem_available_bytes && h.mem_total_bytes && *h.mem_total_bytes > 0) {
    available_share =
        static_cast<double>(*h.mem_available_bytes) / static_cast<double>(*h.mem_total_bytes);
  }
  const bool on = (psi_share && *psi_share >= t_.psi_share) ||
                  (available_share && *available_share < t_.available_share);
  if (on == on_) return std::nullopt;
  on_ = on;
  std::string line = fmt::format("{} {} cause=memory_pressure",
                                 format_iso8601_utc_ms(sample.wall_time), on ? "start" : "end");
  if (psi_share) line += fmt::format(" psi_some_share={:.3f}", *psi_share);
  if (h.mem_available_bytes)
    line += fmt::format(" mem_available_gib={:.1f}", bytes_to_gib(*h.mem_available_bytes));
  if (h.mem_total_bytes)
    line += fmt::format(" mem_total_gib={:.1f}", bytes_to_gib(*h.mem_total_bytes));
  if (sample.host_deltas.major_faults)
    line += fmt::format(" major_faults={}", *sample.host_deltas.major_faults);
  line += '\n';
  return line;
}

std::optional<std::string> PressureTracker::finish(SystemTime now) {
  if (!on_) return std::nullopt;
  on_ = false;
  return fmt::format("{} end cause=memory_pressure reason=run_ended\n", format_iso8601_utc_ms(now));
}

}  // namespace sparkops::watch
