// libFuzzer target: one sysfs attribute value (hwmon, thermal_zone temp, cpufreq kHz).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "host/cpufreq.hpp"
#include "host/hwmon.hpp"
#include "host/thermal_zone.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)sparkops::host::parse_hwmon_value(text, "temp1_input");
  (void)sparkops::host::parse_thermal_temp(text, "temp");
  (void)sparkops::host::parse_khz(text, "scaling_cur_freq");
  return 0;
}
