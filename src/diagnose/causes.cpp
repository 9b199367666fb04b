#include "diagnose/causes.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "base/checked_cast.hpp"
#include "base/units.hpp"
#include "gpu/throttle_reasons.hpp"
#include "sampling/thermal_rule.hpp"

namespace sparkops::diagnose {

namespace {

using Member = std::optional<double> sampling::SampleRow::*;
using Samples = std::vector<const sampling::SampleRow*>;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

Samples in_window(const ThermalLog& log, SystemTime from, SystemTime to) {
  Samples out;
  const auto lo =
      std::lower_bound(log.samples.begin(), log.samples.end(), from,
                       [](const sampling::SampleRow& s, SystemTime t) { return s.time < t; });
  for (auto it = lo; it != log.samples.end() && it->time <= to; ++it) out.push_back(&*it);
  return out;
}

// Median gap between samples (the sampling interval), at least one second.
double sample_interval_seconds(const ThermalLog& log) {
  std::vector<double> gaps;
  for (std::size_t i = 1; i < log.samples.size() && gaps.size() < 1000; ++i) {
    gaps.push_back(
        std::chrono::duration<double>(log.samples[i].time - log.samples[i - 1].time).count());
  }
  if (gaps.empty()) return 1;
  std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2),
                   gaps.end());
  return std::max(1.0, gaps[gaps.size() / 2]);
}

std::optional<double> median_of(const Samples& s, Member m) {
  std::vector<double> v;
  for (const auto* x : s) {
    if (x->*m) v.push_back(*(x->*m));
  }
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  const std::size_t mid = v.size() / 2;
  return v.size() % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

std::optional<double> min_of(const Samples& s, Member m) {
  std::optional<double> out;
  for (const auto* x : s) {
    if (x->*m && (!out || *(x->*m) < *out)) out = *(x->*m);
  }
  return out;
}

std::optional<double> max_of(const Samples& s, Member m) {
  std::optional<double> out;
  for (const auto* x : s) {
    if (x->*m && (!out || *(x->*m) > *out)) out = *(x->*m);
  }
  return out;
}

std::optional<double> sum_of(const Samples& s, std::initializer_list<Member> members) {
  std::optional<double> out;
  for (const auto* x : s) {
    for (const Member m : members) {
      if (x->*m) out = out.value_or(0) + *(x->*m);
    }
  }
  return out;
}

double round3(double v) {
  return std::round(v * 1000.0) / 1000.0;
}

void put(Evidence& e, std::string key, std::optional<double> v) {
  if (v && std::isfinite(*v)) e.emplace_back(std::move(key), round3(*v));
}

}  // namespace

void attribute_cause(Slowdown& sd, const Window& window, std::optional<Window> baseline,
                     const ThermalLog& thermal, const DiagnoseOptions& o) {
  const double interval = sample_interval_seconds(thermal);
  const auto pad = std::chrono::nanoseconds(saturating_round<std::int64_t>(interval * 1e9));
  Samples w = in_window(thermal, window.from, window.to);
  if (w.empty()) w = in_window(thermal, window.from - pad, window.to + pad);
  Samples b;
  if (baseline) b = in_window(thermal, baseline->from, baseline->to);
  if (b.empty())
    b = in_window(thermal, window.from - std::chrono::minutes(10), window.from - pad / 2);
  Evidence& ev = sd.evidence;
  ev.clear();
  put(ev, "samples_in_window", static_cast<double>(w.size()));
  put(ev, "samples_in_baseline", static_cast<double>(b.size()));
  if (w.empty()) {
    sd.cause = Cause::unexplained;
    sd.confidence = 0;
    sd.explanation = "no thermal sample covers this window";
    return;
  }
  const double duration =
      std::max(interval, std::chrono::duration<double>(window.to - window.from).count());

  // Thermal side.
  const auto temp_w = median_of(w, &sampling::SampleRow::gpu_temp_c);
  const auto temp_b = median_of(b, &sampling::SampleRow::gpu_temp_c);
  const auto temp_max = max_of(w, &sampling::SampleRow::gpu_temp_c);
  const auto power_w = median_of(w, &sampling::SampleRow::power_w);
  const auto power_b = median_of(b, &sampling::SampleRow::power_w);
  const auto clock_w = median_of(w, &sampling::SampleRow::sm_clock_mhz);
  const auto clock_b = median_of(b, &sampling::SampleRow::sm_clock_mhz);
  const auto clock_max = median_of(w, &sampling::SampleRow::sm_clock_max_mhz);
  const auto throttle_s = sum_of(
      w, {&sampling::SampleRow::throttle_sw_thermal_s, &sampling::SampleRow::throttle_hw_thermal_s,
          &sampling::SampleRow::throttle_hw_power_brake_s,
          &sampling::SampleRow::throttle_sw_power_cap_s});
  constexpr std::uint64_t kHeldBack = gpu::kReasonSwPowerCap | gpu::kReasonHwSlowdown |
                                      gpu::kReasonSwThermal | gpu::kReasonHwThermal |
                                      gpu::kReasonHwPowerBrake;
  std::size_t reason_samples = 0, reason_known = 0;
  for (const auto* s : w) {
    if (!s->reasons_mask) continue;
    ++reason_known;
    if (*s->reasons_mask & kHeldBack) ++reason_samples;
  }
  put(ev, "gpu_temp_c_baseline", temp_b);
  put(ev, "gpu_temp_c_window", temp_w);
  put(ev, "gpu_temp_c_max", temp_max);
  put(ev, "power_w_baseline", power_b);
  put(ev, "power_w_window", power_w);
  put(ev, "sm_clock_mhz_baseline", clock_b);
  put(ev, "sm_clock_mhz_window", clock_w);
  const std::optional<double> throttle_share =
      throttle_s ? std::optional<double>(std::min(1.0, *throttle_s / duration)) : std::nullopt;
  put(ev, "throttle_seconds", throttle_s);
  put(ev, "throttle_share", throttle_share);
  if (reason_known) put(ev, "throttle_reason_samples", static_cast<double>(reason_samples));

  const bool counters = (throttle_share && *throttle_share >= 0.05) ||
                        (reason_known && static_cast<double>(reason_samples) >=
                                             0.3 * static_cast<double>(reason_known));
  // The thermal rule (sampling/thermal_rule.hpp) on the window's medians against the baseline's:
  // the live detector asks the same functions about its last samples.
  const config::ThermalThresholds& t = o.thermal;
  const auto util_w = median_of(w, &sampling::SampleRow::gpu_util_pct);
  const sampling::CapVerdict cap = sampling::platform_cap(
      t, {power_w && sampling::at_power_ceiling(t, *power_w), temp_w,
          temp_w && temp_b ? std::optional<double>(*temp_w - *temp_b) : std::nullopt,
          util_w ? std::optional<bool>(sampling::is_busy(t, *util_w)) : std::nullopt});
  const bool warm = cap.hot || cap.climbing;
  const bool low_clock =
      clock_w && ((clock_b && sampling::is_low_clock(t, *clock_w, *clock_b)) ||
                  (clock_max && sampling::is_low_clock(t, *clock_w, *clock_max)));
  const bool low_power = power_w && power_b && sampling::is_low_power(t, *power_w, *power_b);
  double thermal_score = 0;
  if (counters) {
    thermal_score = 0.9;
  } else if (cap.signature && low_clock) {
    thermal_score = 0.8;
  } else if (cap.signature) {
    thermal_score = 0.65;
  } else if ((low_clock || low_power) && warm) {
    thermal_score = 0.6;
  }

  // Contention side (extended CSV only).
  const auto avail_b = median_of(b, &sampling::SampleRow::mem_available_bytes);
  const auto avail_min = min_of(w, &sampling::SampleRow::mem_available_bytes);
  const auto psi_some = sum_of(w, {&sampling::SampleRow::psi_mem_some_delta_us});
  const auto psi_full = sum_of(w, {&sampling::SampleRow::psi_mem_full_delta_us});
  const auto faults_w = sum_of(w, {&sampling::SampleRow::major_faults_delta});
  const auto faults_b = sum_of(b, {&sampling::SampleRow::major_faults_delta});
  const auto proc_b = median_of(b, &sampling::SampleRow::gpu_process_memory_bytes);
  const auto proc_w = max_of(w, &sampling::SampleRow::gpu_process_memory_bytes);
  const double b_duration = std::max(interval, static_cast<double>(b.size()) * interval);
  int signals = 0;
  if (avail_b && avail_min) {
    put(ev, "mem_available_gib_baseline", *avail_b / kGiB);
    put(ev, "mem_available_gib_min", *avail_min / kGiB);
    if (*avail_b - *avail_min >= std::max(2.0 * kGiB, 0.1 * *avail_b)) ++signals;
  }
  if (psi_some) {
    const double share = *psi_some / 1e6 / duration;
    put(ev, "psi_mem_some_share", share);
    if (share >= 0.05) ++signals;
  }
  if (psi_full) {
    const double share = *psi_full / 1e6 / duration;
    put(ev, "psi_mem_full_share", share);
    if (share >= 0.01) ++signals;
  }
  if (faults_w) {
    const double rate = *faults_w / duration;
    const double base_rate = faults_b ? *faults_b / b_duration : 0;
    put(ev, "major_faults_per_s", rate);
    put(ev, "major_faults_per_s_baseline",
        faults_b ? std::optional<double>(base_rate) : std::nullopt);
    if (rate >= 50 && rate >= 5 * (base_rate + 1)) ++signals;
  }
  if (proc_b && proc_w) {
    put(ev, "gpu_process_memory_gib_delta", (*proc_w - *proc_b) / kGiB);
    if (*proc_w - *proc_b >= kGiB) ++signals;
  }
  const double contention_score = signals ? std::min(0.95, 0.5 + 0.15 * signals) : 0.0;

  if (thermal_score == 0 && contention_score == 0) {
    sd.cause = Cause::unexplained;
    sd.confidence = 0.5;
    sd.explanation = "samples show no throttling, no thermal signature and no memory pressure";
    return;
  }
  if (thermal_score >= contention_score) {
    sd.cause = Cause::thermal;
    sd.confidence = thermal_score;
    if (counters) {
      sd.explanation = fmt::format("GPU throttle counters: {:.0f} s held back in the window",
                                   throttle_s.value_or(0));
    } else if (cap.signature) {
      sd.explanation = fmt::format(
          "platform cap signature: power {:.0f} W (baseline {:.0f} W) while the GPU "
          "sits at {:.0f} C (baseline {:.0f} C)",
          power_w.value_or(0), power_b.value_or(0), temp_w.value_or(0), temp_b.value_or(0));
    } else if (low_clock) {
      sd.explanation = fmt::format("SM clock fell to {:.0f} MHz (baseline {:.0f} MHz) at {:.0f} C",
                                   clock_w.value_or(0), clock_b.value_or(0), temp_w.value_or(0));
    } else {
      sd.explanation = fmt::format("power fell to {:.0f} W (baseline {:.0f} W) at {:.0f} C",
                                   power_w.value_or(0), power_b.value_or(0), temp_w.value_or(0));
    }
    return;
  }
  sd.cause = Cause::contention;
  sd.confidence = contention_score;
  sd.explanation = fmt::format(
      "memory contention: {} signal(s) (available memory, PSI stalls, major "
      "faults, GPU process memory)",
      signals);
}

}  // namespace sparkops::diagnose
