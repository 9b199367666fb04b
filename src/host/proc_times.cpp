#include "host/proc_times.hpp"

#include <cmath>

#include <fmt/format.h>

#include "base/checked_cast.hpp"
#include "base/text.hpp"

namespace sparkops::host {

Result<std::chrono::milliseconds> parse_proc_uptime(std::string_view text) {
  const auto fields = split_ws(trim(text));
  const auto seconds = fields.empty() ? std::nullopt : parse_double(fields.front());
  if (!seconds || !std::isfinite(*seconds) || *seconds < 0) {
    return fail(Errc::malformed,
                fmt::format("/proc/uptime {}: expected seconds", quote_for_message(text)));
  }
  const auto ms = checked_round<std::int64_t>(*seconds * 1000.0);
  if (!ms) {
    return fail(Errc::malformed,
                fmt::format("/proc/uptime {}: seconds out of range", quote_for_message(text)));
  }
  return std::chrono::milliseconds(*ms);
}

Result<std::int64_t> parse_proc_stat_btime(std::string_view text) {
  for (const auto line : split_lines(text)) {
    // Only a line holding "btime" is split: the "intr" line alone has hundreds of fields.
    if (line.find("btime") == std::string_view::npos) continue;
    const auto fields = split_ws(line);
    if (fields.size() == 2 && fields[0] == "btime") {
      const auto v = parse_i64(fields[1]);
      if (!v)
        return fail(Errc::malformed,
                    fmt::format("/proc/stat: bad line {}", quote_for_message(line)));
      return *v;
    }
  }
  return fail(Errc::not_found, "/proc/stat: no btime line");
}

Result<std::chrono::milliseconds> read_proc_uptime(const HostRoot& root) {
  auto text = root.read("/proc/uptime", 4096);
  if (!text) return tl::unexpected(text.error());
  return parse_proc_uptime(*text);
}

Result<std::int64_t> read_proc_stat_btime(const HostRoot& root) {
  auto text = root.read("/proc/stat");
  if (!text) return tl::unexpected(text.error());
  return parse_proc_stat_btime(*text);
}

std::optional<std::chrono::milliseconds> process_age(std::uint64_t start_ticks,
                                                     std::uint64_t ticks_per_second,
                                                     std::chrono::milliseconds uptime) {
  if (ticks_per_second == 0) return std::nullopt;
  const auto start_ms =
      static_cast<std::int64_t>(start_ticks / ticks_per_second * 1000 +
                                start_ticks % ticks_per_second * 1000 / ticks_per_second);
  if (start_ms > uptime.count()) return std::nullopt;
  return std::chrono::milliseconds(uptime.count() - start_ms);
}

}  // namespace sparkops::host
