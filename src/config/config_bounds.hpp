#pragma once
// The plausible range of every numeric configuration key. A value outside it (or NaN/inf, which
// no key accepts) is refused where it is set — a file layer or a flag — with one line naming the
// key, so `slowdown_factor = inf` or `sustain_steps = 9223372036854775807` never reaches a
// detector. Every bound has a stated reason; config_test checks that every numeric key has one.

#include <string_view>

namespace sparkops::config {

struct ConfigBounds {
  std::string_view key;
  double min = 0;  // bytes for "bytes" keys, seconds for "duration" keys, else the value
  double max = 0;
  bool min_exclusive = false;  // the value must be above min, not at it
  std::string_view why;
};

// nullptr for a key without a range (strings, bools, paths).
const ConfigBounds* config_bounds(std::string_view key);

}  // namespace sparkops::config
