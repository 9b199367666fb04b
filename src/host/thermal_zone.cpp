#include "host/thermal_zone.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "base/text.hpp"
#include "host/read_optional.hpp"

namespace sparkops::host {

Result<std::int64_t> parse_thermal_temp(std::string_view text, std::string_view file) {
  // "36000\n"
  if (const auto v = parse_i64(text)) return *v;
  return fail(Errc::malformed, fmt::format("{} line 1: expected millidegrees, got {}", file,
                                           quote_for_message(trim(text))));
}

Result<std::vector<ThermalZone>> read_thermal_zones(const HostRoot& root) {
  std::vector<ThermalZone> zones;
  auto entries = root.list("/sys/class/thermal");
  if (!entries) {
    if (entries.error().code == Errc::not_found) return zones;
    return tl::unexpected(entries.error());
  }
  std::vector<std::pair<unsigned, std::string>> dirs;
  for (const auto& entry : *entries) {
    if (const auto index = entry_index(entry, "thermal_zone")) dirs.emplace_back(*index, entry);
  }
  std::sort(dirs.begin(), dirs.end());
  for (const auto& [index, entry] : dirs) {
    const std::string dir = "/sys/class/thermal/" + entry;
    auto type = root.read(dir + "/type", 4096);
    if (!type) continue;
    ThermalZone zone{entry, std::string(trim(*type)), std::nullopt};
    auto temp = root.read(dir + "/temp", 4096);
    if (temp) {
      auto value = parse_thermal_temp(*temp, dir + "/temp");
      if (!value) return tl::unexpected(value.error());
      zone.temp_millicelsius = *value;
    }
    zones.push_back(std::move(zone));
  }
  return zones;
}

}  // namespace sparkops::host
