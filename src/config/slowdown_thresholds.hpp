#pragma once
// The [analyze] config section as one typed value: the thresholds of the slowdown rule
// (diagnose/slowdown_rule.hpp) that `analyze` applies offline and `watch` applies live. The member
// initialisers below are the only place these defaults are written: the key table
// (config_keys.cpp) prints them as the keys' default text.

#include <cstdint>

#include "config/config.hpp"

namespace sparkops::config {

struct SlowdownThresholds {
  double slowdown_factor = 1.3;    // analyze.slowdown_factor (step time this many x the baseline)
  std::int64_t sustain_steps = 5;  // analyze.sustain_steps (slow measurements a slowdown needs)
  double min_wall_share = 0.75;    // analyze.min_wall_share (their share of the episode's time)
  double noise_sigmas = 3.0;       // analyze.noise_sigmas (slow = beyond the baseline's own noise)
  std::int64_t warmup_steps = 5;   // analyze.warmup_steps (measurements before the baseline)
};

// The analyze.* values in effect (defaults, files, flags).
SlowdownThresholds slowdown_thresholds(const Config& config);

}  // namespace sparkops::config
