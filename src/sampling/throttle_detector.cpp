#include "sampling/throttle_detector.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "base/time_format.hpp"
#include "gpu/throttle_reasons.hpp"
#include "sampling/thermal_rule.hpp"

namespace sparkops::sampling {

namespace {

std::size_t slot(ThrottleCause cause) {
  return static_cast<std::size_t>(cause);
}

double seconds(std::chrono::nanoseconds d) {
  return static_cast<double>(d.count()) / 1e9;
}

struct CounterCause {
  ThrottleCause cause;
  std::uint64_t bit;
  std::optional<std::chrono::nanoseconds> gpu::ThrottleCounters::*counter;  // nullptr: no counter
};

constexpr std::array<CounterCause, 5> kCounterCauses = {{
    {ThrottleCause::sw_power_cap, gpu::kReasonSwPowerCap, &gpu::ThrottleCounters::sw_power_cap},
    {ThrottleCause::hw_slowdown, gpu::kReasonHwSlowdown, nullptr},
    {ThrottleCause::sw_thermal, gpu::kReasonSwThermal, &gpu::ThrottleCounters::sw_thermal},
    {ThrottleCause::hw_thermal, gpu::kReasonHwThermal, &gpu::ThrottleCounters::hw_thermal},
    {ThrottleCause::hw_power_brake, gpu::kReasonHwPowerBrake,
     &gpu::ThrottleCounters::hw_power_brake},
}};

std::string context_evidence(const gpu::GpuSnapshot& s) {
  std::string out;
  if (s.temp_millicelsius) out += fmt::format(" temp_c={}", *s.temp_millicelsius / 1000);
  if (s.power_microwatts)
    out += fmt::format(" power_w={:.2f}", static_cast<double>(*s.power_microwatts) / 1e6);
  if (s.sm_clock_mhz) out += fmt::format(" sm_clock_mhz={}", *s.sm_clock_mhz);
  if (s.sm_clock_max_mhz) out += fmt::format(" sm_clock_max_mhz={}", *s.sm_clock_max_mhz);
  if (s.util_gpu_percent) out += fmt::format(" util_pct={}", *s.util_gpu_percent);
  if (s.clocks_event_reasons) out += fmt::format(" reasons={:#x}", *s.clocks_event_reasons);
  return out;
}

}  // namespace

std::string_view throttle_cause_name(ThrottleCause cause) {
  switch (cause) {
    case ThrottleCause::sw_power_cap:
      return "sw_power_cap";
    case ThrottleCause::hw_slowdown:
      return "hw_slowdown";
    case ThrottleCause::sw_thermal:
      return "sw_thermal";
    case ThrottleCause::hw_thermal:
      return "hw_thermal";
    case ThrottleCause::hw_power_brake:
      return "hw_power_brake";
    case ThrottleCause::platform_cap:
      return "platform_cap";
    case ThrottleCause::unflagged_low_clock:
      return "unflagged_low_clock";
    case ThrottleCause::unflagged_low_power:
      return "unflagged_low_power";
    case ThrottleCause::gpu_lost:
      return "gpu_lost";
    case ThrottleCause::gpu_hung:
      return "gpu_hung";
    case ThrottleCause::host_sensor_lost:
      return "host_sensor_lost";
  }
  return "unknown";
}

std::string format_event_line(const ThrottleEvent& event) {
  std::string line = fmt::format("{} {} cause={}", format_iso8601_utc_ms(event.time),
                                 event.edge == EpisodeEdge::start ? "start" : "end",
                                 throttle_cause_name(event.cause));
  if (event.gpu_index) line += fmt::format(" gpu={}", *event.gpu_index);
  if (!event.evidence.empty()) {
    line += ' ';
    line += event.evidence;
  }
  line += '\n';
  return line;
}

ThrottleDetector::ThrottleDetector(DetectorConfig config) : config_(config) {}

void ThrottleDetector::step(Episode& ep, ThrottleCause cause, std::optional<unsigned> gpu,
                            const Observation& obs, std::size_t sustain, SystemTime now,
                            std::vector<ThrottleEvent>& out) {
  const std::size_t need = std::max<std::size_t>(sustain, 1);
  if (obs.seen) {
    if (ep.on_streak == 0) {
      ep.first_seen = now;
      ep.first_evidence = obs.evidence;
      if (!ep.open) {
        ep.samples = 0;
        ep.counter_total_s = 0.0;
      }
    }
    ++ep.on_streak;
    ep.off_streak = 0;
    ++ep.samples;
    ep.counter_total_s += obs.counter_s;
    if (!ep.open && ep.on_streak >= need) {
      ep.open = true;
      out.push_back({ep.first_seen, EpisodeEdge::start, cause, gpu, ep.first_evidence});
    }
    return;
  }
  ep.on_streak = 0;
  if (!ep.open) {
    ep.samples = 0;
    ep.counter_total_s = 0.0;
    return;
  }
  if (ep.off_streak == 0) ep.first_clear = now;
  ++ep.off_streak;
  if (ep.off_streak >= need) {
    ep.open = false;
    ep.off_streak = 0;
    std::string evidence = fmt::format("samples={}", ep.samples);
    if (ep.counter_total_s > 0.0)
      evidence += fmt::format(" counter_total_s={:.3f}", ep.counter_total_s);
    out.push_back({ep.first_clear, EpisodeEdge::end, cause, gpu, std::move(evidence)});
    ep.samples = 0;
    ep.counter_total_s = 0.0;
  }
}

void ThrottleDetector::feed_gpu(const Sample& sample, const GpuReading& gpu, GpuTrack& track,
                                std::vector<ThrottleEvent>& out) {
  const gpu::GpuSnapshot& s = gpu.snapshot;
  const std::uint64_t bits = s.clocks_event_reasons.value_or(0);
  // Evidence is kept only from an episode's first sample (step(): first_evidence), so it is
  // formatted only when that episode's on-streak is about to begin; the context once per tick at
  // most.
  std::optional<std::string> context_text;
  const auto context = [&]() -> const std::string& {
    if (!context_text) context_text = context_evidence(s);
    return *context_text;
  };
  const auto starting = [&](ThrottleCause cause) {
    return track.episodes[slot(cause)].on_streak == 0;
  };
  const SystemTime now = sample.wall_time;
  bool any_flag = (bits & gpu::kThrottlingReasonsMask & ~gpu::kReasonSyncBoost) != 0;

  for (const auto& cc : kCounterCauses) {
    Observation obs;
    const bool bit = (bits & cc.bit) != 0;
    std::optional<std::chrono::nanoseconds> delta;
    if (cc.counter != nullptr) delta = gpu.deltas.throttle.*cc.counter;
    const bool advanced = delta && *delta >= config_.min_counter_increase;
    if (advanced) any_flag = true;
    if (bit || advanced) {
      obs.seen = true;
      if (delta) obs.counter_s = seconds(*delta);
      if (starting(cc.cause)) {
        obs.evidence = fmt::format("bit={}", bit ? "set" : "clear");
        if (delta) {
          obs.evidence += fmt::format(" counter_delta_s={:.3f} interval_s={:.3f}", obs.counter_s,
                                      seconds(sample.interval));
        }
        obs.evidence += context();
      }
    }
    step(track.episodes[slot(cc.cause)], cc.cause, s.index, obs, 1, now, out);
  }

  const std::optional<double> power_w =
      s.power_microwatts ? std::optional<double>(static_cast<double>(*s.power_microwatts) / 1e6)
                         : std::nullopt;
  const std::optional<double> temp_c =
      s.temp_millicelsius
          ? std::optional<double>(static_cast<double>(*s.temp_millicelsius) / 1000.0)
          : std::nullopt;
  const bool busy =
      s.util_gpu_percent && is_busy(config_, static_cast<double>(*s.util_gpu_percent));

  track.window.push_back({power_w, temp_c});
  while (track.window.size() > std::max<std::size_t>(config_.window_samples, 2))
    track.window.pop_front();

  // Platform cap: every power of the window at the ceiling, the temperature climbing over the
  // window or hot, busy.
  {
    Observation obs;
    bool flat = track.window.size() >= 2;
    std::optional<double> min_temp;
    for (const Point& p : track.window) {
      if (!p.power_w || !at_power_ceiling(config_, *p.power_w)) flat = false;
      if (p.temp_c) min_temp = min_temp ? std::min(*min_temp, *p.temp_c) : *p.temp_c;
    }
    if (temp_c) {
      const double rise = min_temp ? *temp_c - *min_temp : 0.0;
      const CapVerdict cap = platform_cap(config_, {flat, temp_c, rise, busy});
      if (cap.signature) {
        obs.seen = true;
        if (starting(ThrottleCause::platform_cap))
          obs.evidence = fmt::format(
              "ceiling_w={:.0f} band_w={:.0f} temp_rise_c={:.1f} hot_c={:.0f} rated_w={:.0f}{}",
              config_.ceiling_watts, config_.ceiling_band_watts, rise, config_.hot_celsius,
              config_.rated_watts, context());
      }
    }
    step(track.episodes[slot(ThrottleCause::platform_cap)], ThrottleCause::platform_cap, s.index,
         obs, config_.sustain_samples, now, out);
  }

  // GB10's unflagged states.
  {
    Observation obs;
    if (busy && !any_flag && s.sm_clock_mhz && s.sm_clock_max_mhz &&
        is_low_clock(config_, static_cast<double>(*s.sm_clock_mhz),
                     static_cast<double>(*s.sm_clock_max_mhz))) {
      obs.seen = true;
      if (starting(ThrottleCause::unflagged_low_clock)) {
        obs.evidence = fmt::format(
            "clock_ratio={:.2f} threshold={:.2f}{}",
            static_cast<double>(*s.sm_clock_mhz) / static_cast<double>(*s.sm_clock_max_mhz),
            config_.low_clock_ratio, context());
      }
    }
    step(track.episodes[slot(ThrottleCause::unflagged_low_clock)],
         ThrottleCause::unflagged_low_clock, s.index, obs, config_.sustain_samples, now, out);
  }
  {
    Observation obs;
    const bool reference =
        track.busy_samples >= config_.reference_min_samples && track.busy_power_peak_w > 0.0;
    if (busy && !any_flag && power_w && reference &&
        is_low_power(config_, *power_w, track.busy_power_peak_w)) {
      obs.seen = true;
      if (starting(ThrottleCause::unflagged_low_power)) {
        obs.evidence = fmt::format("run_peak_w={:.2f} power_ratio={:.2f} threshold={:.2f}{}",
                                   track.busy_power_peak_w, *power_w / track.busy_power_peak_w,
                                   config_.low_power_ratio, context());
      }
    }
    step(track.episodes[slot(ThrottleCause::unflagged_low_power)],
         ThrottleCause::unflagged_low_power, s.index, obs, config_.sustain_samples, now, out);
  }
  if (busy && power_w) {
    track.busy_power_peak_w = std::max(track.busy_power_peak_w, *power_w);
    ++track.busy_samples;
  }
}

std::vector<ThrottleEvent> ThrottleDetector::feed(const Sample& sample) {
  std::vector<ThrottleEvent> out;
  {
    Observation obs;
    if (sample.gpu_state == gpu::GpuState::lost) {
      obs.seen = true;
      obs.evidence = sample.gpu_detail.empty()
                         ? std::string("state=lost")
                         : fmt::format("state=lost detail=\"{}\"", sample.gpu_detail);
    }
    step(gpu_lost_, ThrottleCause::gpu_lost, std::nullopt, obs, 1, sample.wall_time, out);
  }
  {
    Observation obs;
    if (sample.gpu_state == gpu::GpuState::hung) {
      obs.seen = true;
      obs.evidence = sample.gpu_detail.empty()
                         ? std::string("state=hung")
                         : fmt::format("state=hung detail=\"{}\"", sample.gpu_detail);
    }
    step(gpu_hung_, ThrottleCause::gpu_hung, std::nullopt, obs, 1, sample.wall_time, out);
  }
  {
    Observation obs;
    if (sample.host.hottest_millicelsius) {
      sensor_seen_ = true;
    } else if (sensor_seen_) {
      obs.seen = true;
      obs.evidence = "hottest_sensor=absent";
    }
    step(sensor_lost_, ThrottleCause::host_sensor_lost, std::nullopt, obs, 1, sample.wall_time,
         out);
  }
  for (const GpuReading& gpu : sample.gpus) feed_gpu(sample, gpu, gpus_[gpu.snapshot.index], out);
  return out;
}

std::vector<ThrottleEvent> ThrottleDetector::finish(SystemTime time) {
  std::vector<ThrottleEvent> out;
  const auto close = [&](Episode& ep, ThrottleCause cause, std::optional<unsigned> gpu) {
    if (!ep.open) return;
    std::string evidence = fmt::format("samples={} reason=sampler_stopped", ep.samples);
    if (ep.counter_total_s > 0.0)
      evidence += fmt::format(" counter_total_s={:.3f}", ep.counter_total_s);
    out.push_back({time, EpisodeEdge::end, cause, gpu, std::move(evidence)});
    ep = Episode{};
  };
  close(gpu_lost_, ThrottleCause::gpu_lost, std::nullopt);
  close(gpu_hung_, ThrottleCause::gpu_hung, std::nullopt);
  close(sensor_lost_, ThrottleCause::host_sensor_lost, std::nullopt);
  for (auto& [index, track] : gpus_) {
    for (std::size_t i = 0; i < kThrottleCauseCount; ++i) {
      close(track.episodes[i], static_cast<ThrottleCause>(i), index);
    }
  }
  return out;
}

}  // namespace sparkops::sampling
