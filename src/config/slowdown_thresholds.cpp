#include "config/slowdown_thresholds.hpp"

namespace sparkops::config {

SlowdownThresholds slowdown_thresholds(const Config& config) {
  SlowdownThresholds t;
  t.slowdown_factor = config.get_number("analyze.slowdown_factor");
  t.sustain_steps = config.get_integer("analyze.sustain_steps");
  t.min_wall_share = config.get_number("analyze.min_wall_share");
  t.noise_sigmas = config.get_number("analyze.noise_sigmas");
  t.warmup_steps = config.get_integer("analyze.warmup_steps");
  return t;
}

}  // namespace sparkops::config
