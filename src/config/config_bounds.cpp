#include "config/config_bounds.hpp"

#include <array>

namespace sparkops::config {

namespace {

constexpr double kTiB = 1024.0 * 1024.0 * 1024.0 * 1024.0;
// Above the memory of any one machine sparkops is for (GH200: 480 GB LPDDR5X + 144 GB HBM3e; a
// GB10 has 128 GB): a size past it in the pool/procs keys is a typo, not a machine.
constexpr double kPoolMax = 4 * kTiB;
// More steps than a run can have: a billion steps at one step a second is 31 years.
constexpr double kStepsMax = 1e9;
// One node's power: a GB10 is rated 240 W, a GH200 module up to 1000 W; 10 kW is a rack.
constexpr double kWattsMax = 10'000;

// Units: bytes for "bytes", seconds for "duration", the value itself otherwise.
constexpr std::array kBounds = {
    ConfigBounds{"pool.overhead", 0, kPoolMax, false, "above any machine's memory"},
    ConfigBounds{"pool.flush_hint_gap", 0, kPoolMax, false, "above any machine's memory"},
    ConfigBounds{"thermal.rated_watts", 0, kWattsMax, true, "one node draws well under 10 kW"},
    ConfigBounds{"thermal.ceiling_watts", 0, kWattsMax, true, "one node draws well under 10 kW"},
    ConfigBounds{"thermal.ceiling_band_watts", 0, kWattsMax, false,
                 "one node draws well under 10 kW"},
    // GPU slowdown and shutdown limits sit around 90-105 C; no sensor reading goes past 150.
    ConfigBounds{"thermal.hot_celsius", 0, 150, false, "GPUs shut down near 100 C"},
    ConfigBounds{"thermal.busy_util_percent", 0, 100, false, "a percentage"},
    ConfigBounds{"thermal.low_clock_ratio", 0, 1, false, "a fraction of the maximum clock"},
    ConfigBounds{"thermal.low_power_ratio", 0, 1, false, "a fraction of the run's own level"},
    // The watchdog must let a healthy call (milliseconds) through and still answer "hung" while a
    // person is waiting for `status`.
    ConfigBounds{"gpu.timeout", 0.001, 600, false, "between 1 ms and 10 min"},
    // The sampler's clock resolution is 1 ms; a day between samples is not sampling beside a run.
    ConfigBounds{"sample.interval", 0.001, 86'400, false, "between 1 ms and a day"},
    ConfigBounds{"sample.fsync_every", 0, 1e6, false, "0 (never) up to a million rows"},
    // Each buffered row is a few hundred bytes: ten million rows are already gigabytes of RAM.
    ConfigBounds{"sample.memory_buffer_rows", 1, 1e7, false, "at most ten million rows in RAM"},
    // Below 1 MiB a log cannot hold a run's first minutes; 16 TiB is ext4's largest file (4 KiB
    // blocks), so a larger cap is no cap.
    ConfigBounds{"watch.max_log_bytes", 1024.0 * 1024.0, 16 * kTiB, false,
                 "between 1 MiB and 16 TiB (ext4's largest file)"},
    // The exporter reads /proc and the GPU each tick: more often than 100 ms is its own load.
    ConfigBounds{"serve.interval", 0.1, 86'400, false, "between 100 ms and a day"},
    ConfigBounds{"serve.max_workloads", 0, 10'000, false, "Prometheus series stay bounded"},
    // Below 1 every step is a slowdown; a step 1000 times the baseline is a stall, not a slowdown.
    ConfigBounds{"analyze.slowdown_factor", 1, 1000, true, "above 1 and at most 1000"},
    ConfigBounds{"analyze.min_wall_share", 0, 1, false, "a share of the wall time"},
    // Past ~38 robust sigmas a normal tail is below the smallest double: no step could count.
    ConfigBounds{"analyze.noise_sigmas", 0, 40, false, "a normal tail past 38 sigmas underflows"},
    ConfigBounds{"analyze.sustain_steps", 1, kStepsMax, false, "more steps than any run"},
    ConfigBounds{"analyze.warmup_steps", 0, kStepsMax, false, "more steps than any run"},
    ConfigBounds{"procs.small_workload", 0, kPoolMax, false, "above any machine's memory"},
    ConfigBounds{"procs.near_capacity_fraction", 0, 1, true, "a fraction of the device total"},
    ConfigBounds{"procs.tight_margin", 0, kPoolMax, false, "above any machine's memory"},
    ConfigBounds{"procs.orphan_min", 0, kPoolMax, false, "above any machine's memory"},
    ConfigBounds{"plan.host_process", 0, kPoolMax, false, "above any machine's memory"},
    ConfigBounds{"plan.dataset", 0, kPoolMax, false, "above any machine's memory"},
    ConfigBounds{"plan.worker_bytes", 0, kPoolMax, false, "above any machine's memory"},
    // More workers than any machine has cores is a typo.
    ConfigBounds{"plan.dataloader_workers", 0, 1024, false,
                 "more workers than any machine's cores"},
};

}  // namespace

const ConfigBounds* config_bounds(std::string_view key) {
  for (const auto& b : kBounds) {
    if (b.key == key) return &b;
  }
  return nullptr;
}

}  // namespace sparkops::config
