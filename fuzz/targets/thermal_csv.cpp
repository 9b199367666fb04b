// libFuzzer target: a thermal sample log (nvidia-smi CSV or sparkops sample output).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "diagnose/thermal_log.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  sparkops::diagnose::ThermalReadOptions options;
  options.max_samples = 100'000;
  (void)sparkops::diagnose::parse_thermal_log(text, options, "thermal.csv");
  options.tz_offset = std::chrono::hours(-14);
  (void)sparkops::diagnose::parse_thermal_log(text, options, "thermal.csv");
  return 0;
}
