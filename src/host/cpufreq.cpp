#include "host/cpufreq.hpp"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "base/text.hpp"
#include "host/read_optional.hpp"

namespace sparkops::host {

Result<std::uint64_t> parse_khz(std::string_view text, std::string_view file) {
  // "3504000\n"
  if (const auto v = parse_u64(text)) return *v;
  return fail(Errc::malformed,
              fmt::format("{} line 1: expected kHz, got {}", file, quote_for_message(trim(text))));
}

Result<std::vector<CpuFreq>> read_cpufreq(const HostRoot& root) {
  std::vector<CpuFreq> cores;
  auto entries = root.list("/sys/devices/system/cpu");
  if (!entries) {
    if (entries.error().code == Errc::not_found) return cores;
    return tl::unexpected(entries.error());
  }
  std::vector<unsigned> cpus;
  for (const auto& entry : *entries) {
    if (const auto index = entry_index(entry, "cpu")) cpus.push_back(*index);
  }
  std::sort(cpus.begin(), cpus.end());
  for (const unsigned cpu : cpus) {
    const std::string dir = fmt::format("/sys/devices/system/cpu/cpu{}/cpufreq", cpu);
    if (!root.exists(dir)) continue;
    CpuFreq out;
    out.cpu = cpu;
    const std::pair<std::string_view, std::optional<std::uint64_t>*> files[] = {
        {"scaling_cur_freq", &out.cur_khz},
        {"cpuinfo_max_freq", &out.max_khz},
        {"cpuinfo_min_freq", &out.min_khz},
    };
    for (const auto& [name, field] : files) {
      const std::string path = dir + "/" + std::string(name);
      auto text = root.read(path, 4096);
      if (!text) continue;
      auto khz = parse_khz(*text, path);
      if (!khz) return tl::unexpected(khz.error());
      *field = *khz;
    }
    cores.push_back(out);
  }
  return cores;
}

}  // namespace sparkops::host
