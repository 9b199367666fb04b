#include "diagnose/synthetic_trace.hpp"

#include <cmath>

#include <fmt/format.h>

#include "base/time_format.hpp"

namespace sparkops::test {

namespace {

std::string clock_text(double seconds) {
  const auto s = static_cast<std::int64_t>(seconds);
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
  return fmt::format("{:02}:{:02}", s / 60, s % 60);
}

const Episode* episode_at(const TraceSpec& spec, std::int64_t step) {
  for (const auto& e : spec.episodes) {
    if (step >= e.first_step && step <= e.last_step) return &e;
  }
  return nullptr;
}

struct Span {
  double from;
  double to;
  EpisodeKind kind;
};

}  // namespace

Trace make_trace(const TraceSpec& spec) {
  Trace t;
  t.log = "INFO:__main__:Transformers version: 4.57.6\n";
  double now = 0;  // seconds since start
  double ema = 0;  // tqdm's smoothed seconds per iteration (smoothing 0.3)
  std::vector<Span> spans;
  t.log += fmt::format("  0%|          | 0/{} [00:00<?, ?it/s]", spec.steps);
  for (std::int64_t step = 1; step <= spec.steps; ++step) {
    double dt = spec.base_seconds;
    if (const Episode* e = episode_at(spec, step)) {
      dt = e->seconds;
      if (step == e->first_step) spans.push_back({now, now, e->kind});
    }
    for (const auto& ev : spec.evals) {
      if (ev.after_step + 1 == step) dt += ev.seconds;
    }
    for (const auto& ck : spec.checkpoints) {
      if (ck.after_step + 1 == step) dt += ck.seconds;
    }
    now += dt;
    ema = step == 1 ? dt : 0.3 * dt + 0.7 * ema;
    if (const Episode* e = episode_at(spec, step); e && step == e->last_step) spans.back().to = now;
    const auto pct = static_cast<int>(100 * step / spec.steps);
    t.log +=
        fmt::format("\r{:3}%|#         | {}/{} [{}<{}, {:5.2f}s/it]", pct, step, spec.steps,
                    clock_text(now), clock_text(ema * static_cast<double>(spec.steps - step)), ema);
    if (step % 10 == 0) {
      t.log += fmt::format(
          "\n{{'loss': {:.4f}, 'grad_norm': 0.52, 'learning_rate': 0.0002, 'epoch': {:.2f}}}\n",
          2.0 - static_cast<double>(step) / 1000.0,
          static_cast<double>(step) / static_cast<double>(spec.steps));
    }
    for (const auto& ev : spec.evals) {
      if (ev.after_step != step) continue;
      t.log += "\n  0%|          | 0/20 [00:00<?, ?it/s]";
      for (int k = 1; k <= 20; ++k) {
        t.log += fmt::format("\r{:3}%|#         | {}/20 [{}<00:00,  {:.2f}it/s]", k * 5, k,
                             clock_text(ev.seconds * k / 20), 20 / ev.seconds);
      }
      t.log += fmt::format(
          "\n{{'eval_loss': 1.1, 'eval_runtime': {:.1f}, 'eval_samples_per_second': 3.2, "
          "'epoch': {:.2f}}}\n",
          ev.seconds, static_cast<double>(step) / static_cast<double>(spec.steps));
    }
    for (const auto& ck : spec.checkpoints) {
      if (ck.after_step == step)
        t.log += fmt::format("\nSaving model checkpoint to out/checkpoint-{}\n", step);
    }
  }
  t.log += fmt::format(
      "\n{{'train_runtime': {:.1f}, 'train_samples_per_second': 1.0, "
      "'train_steps_per_second': 0.5, 'train_loss': 1.8, 'epoch': 1.0}}\n",
      now);

  // Samples from a minute before the run to a minute after it.
  t.extended_csv =
      "# sparkops sample host=spark kernel=6.11 driver=580.95 device=NVIDIA GB10 version=0.1.0\n"
      "timestamp_utc,gpu_index,gpu_temp_c,gpu_margin_c,power_w,energy_delta_j,sm_clock_mhz,"
      "sm_clock_max_mhz,gpu_util_pct,pstate,reasons_hex,reasons,throttle_sw_power_cap_s,"
      "throttle_sync_boost_s,throttle_sw_thermal_s,throttle_hw_thermal_s,throttle_hw_power_brake_s,"
      "host_hottest_sensor,host_hottest_c,spbm_sys_total_w,spbm_soc_pkg_w,spbm_cpu_gpu_w,spbm_gpu_"
      "w,"
      "spbm_dc_input_w,mem_total_bytes,mem_free_bytes,mem_available_bytes,cached_bytes,"
      "psi_mem_some_delta_us,psi_mem_full_delta_us,major_faults_delta,gpu_process_memory_bytes\n";
  t.smi_csv = "timestamp,temperature.gpu,power.draw\n";
  const double gib = 1024.0 * 1024.0 * 1024.0;
  for (double at = -60; at <= now + 60; at += spec.sample_interval_seconds) {
    double temp = 62, power = 98, clock = 2400, avail = 60 * gib, psi = 0, faults = 2,
           proc = 40 * gib;
    double sw_thermal = 0;
    unsigned reasons = 0;
    for (const auto& s : spans) {
      if (at < s.from || at > s.to) continue;
      if (s.kind == EpisodeKind::thermal) {
        temp = 88;
        power = 97;
        clock = 1700;
        sw_thermal = spec.sample_interval_seconds * 0.6;
        reasons = 0x20;
      } else {
        avail = 3 * gib;
        psi = spec.sample_interval_seconds * 0.4e6;
        faults = 5000;
        proc = 52 * gib;
        power = 75;
        temp = 58;
      }
    }
    const SystemTime when =
        spec.start + std::chrono::milliseconds(static_cast<std::int64_t>(at * 1000));
    t.extended_csv += fmt::format(
        "{},0,{:.0f},{:.0f},{:.2f},{:.1f},{:.0f},2600,97,P0,0x{:016x},{},0,0,{:.3f},0,0,acpitz/"
        "temp1,55,"
        "140,,,{:.2f},180,{:.0f},{:.0f},{:.0f},{:.0f},{:.0f},0,{:.0f},{:.0f}\n",
        format_iso8601_utc_ms(when), temp, 95 - temp, power, power * spec.sample_interval_seconds,
        clock, reasons, reasons ? "sw_thermal" : "none", sw_thermal, power, 128 * gib, avail * 0.5,
        avail, avail * 0.4, psi, faults, proc);
    const std::string iso = format_iso8601_utc_ms(when);
    // nvidia-smi style: "2025/11/09 09:26:12.345"
    std::string smi = iso.substr(0, 23);
    smi[4] = '/';
    smi[7] = '/';
    smi[10] = ' ';
    t.smi_csv += fmt::format("{}, {:.0f}, {:.2f} W\n", smi, temp, power);
  }
  return t;
}

}  // namespace sparkops::test
