#pragma once
// Thermal zones: /sys/class/thermal/thermal_zone*/{type,temp}.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "host/host_root.hpp"

namespace sparkops::host {

struct ThermalZone {
  std::string zone;                               // "thermal_zone0"
  std::string type;                               // "acpitz", "x86_pkg_temp", "cpu-thermal" ...
  std::optional<std::int64_t> temp_millicelsius;  // absent when `temp` cannot be read (EIO/ENODATA)
};

// Pure: a `temp` file ("36000\n", millidegrees Celsius); malformed names `file` and line 1.
Result<std::int64_t> parse_thermal_temp(std::string_view text, std::string_view file);

// Sorted by zone number; empty when /sys/class/thermal does not exist. A zone whose `type` cannot
// be read is skipped; a malformed `temp` is an Error naming the file.
Result<std::vector<ThermalZone>> read_thermal_zones(const HostRoot& root);

}  // namespace sparkops::host
