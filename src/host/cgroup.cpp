#include "host/cgroup.hpp"

#include <fmt/format.h>

#include "base/text.hpp"
#include "host/read_optional.hpp"

namespace sparkops::host {

Result<std::string> parse_proc_self_cgroup(std::string_view text) {
  // "0::/user.slice/user-1000.slice/session-2.scope" (v1 lines "4:memory:/..." are skipped)
  std::optional<std::string> found;
  std::size_t line_no = 0;
  for (std::string_view line : split_lines(text)) {
    ++line_no;
    line = trim(line);
    if (line.empty()) continue;
    const std::size_t first = line.find(':');
    const std::size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) {
      return fail(Errc::malformed,
                  fmt::format("/proc/self/cgroup line {}: expected id:controllers:path, got {}",
                              line_no, quote_for_message(line)));
    }
    if (line.substr(0, first) == "0" && second == first + 1) {
      const std::string_view path = line.substr(second + 1);
      if (!path.starts_with('/')) {
        return fail(Errc::malformed,
                    fmt::format("/proc/self/cgroup line {}: path is not absolute: {}", line_no,
                                quote_for_message(line)));
      }
      found = std::string(path);
    }
  }
  if (found) return *found;
  return fail(Errc::not_found, "/proc/self/cgroup: no cgroup v2 (\"0::\") line");
}

Result<std::optional<std::uint64_t>> parse_cgroup_limit(std::string_view text,
                                                        std::string_view file) {
  // "max\n" or "34359738368\n"
  const std::string_view value = trim(text);
  if (value == "max") return std::optional<std::uint64_t>();
  if (const auto n = parse_u64(value)) return std::optional<std::uint64_t>(*n);
  return fail(Errc::malformed, fmt::format("{} line 1: expected a byte count or \"max\", got {}",
                                           file, quote_for_message(value)));
}

namespace {

struct Level {
  std::string path;  // cgroup path ("/" for the namespace root)
  std::optional<std::uint64_t> max_bytes;
  std::optional<std::uint64_t> high_bytes;
  std::optional<std::uint64_t> current_bytes;
  bool any_file = false;
};

std::string sys_dir(std::string_view cgroup_path) {
  if (cgroup_path == "/") return "/sys/fs/cgroup";
  return fmt::format("/sys/fs/cgroup{}", cgroup_path);
}

Result<std::optional<std::uint64_t>> read_limit_file(const HostRoot& root, const std::string& file,
                                                     bool& any_file) {
  auto text = read_optional(root, file);
  if (!text) return tl::unexpected(text.error());
  if (!*text) return std::optional<std::uint64_t>();
  any_file = true;
  return parse_cgroup_limit(**text, file);
}

Result<Level> read_level(const HostRoot& root, std::string_view cgroup_path) {
  Level level;
  level.path = std::string(cgroup_path);
  const std::string dir = sys_dir(cgroup_path);
  auto max = read_limit_file(root, dir + "/memory.max", level.any_file);
  if (!max) return tl::unexpected(max.error());
  level.max_bytes = *max;
  auto high = read_limit_file(root, dir + "/memory.high", level.any_file);
  if (!high) return tl::unexpected(high.error());
  level.high_bytes = *high;
  auto current = read_limit_file(root, dir + "/memory.current", level.any_file);
  if (!current) return tl::unexpected(current.error());
  level.current_bytes = *current;
  return level;
}

std::string parent_of(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  if (slash == 0 || slash == std::string_view::npos) return "/";
  return std::string(path.substr(0, slash));
}

std::optional<std::uint64_t> level_headroom(const Level& level) {
  if (!level.max_bytes) return std::nullopt;
  const std::uint64_t current = level.current_bytes.value_or(0);
  return current >= *level.max_bytes ? 0 : *level.max_bytes - current;
}

}  // namespace

Result<std::optional<CgroupMemory>> read_cgroup_memory(const HostRoot& root) {
  auto self = read_optional(root, "/proc/self/cgroup");
  if (!self) return tl::unexpected(self.error());
  if (!*self) return std::optional<CgroupMemory>();
  auto path = parse_proc_self_cgroup(**self);
  if (!path) {
    if (path.error().code == Errc::not_found) return std::optional<CgroupMemory>();
    return tl::unexpected(path.error());
  }
  // Without a cgroup namespace a container sees the host's path, but its /sys/fs/cgroup is the
  // container's own cgroup: the directory is missing, and the mount root is the right place.
  const bool mounted = *path == "/" || root.exists(sys_dir(*path));
  const std::string own = mounted ? std::move(*path) : std::string(1, '/');

  auto own_level = read_level(root, own);
  if (!own_level) return tl::unexpected(own_level.error());
  if (!own_level->any_file) return std::optional<CgroupMemory>();

  CgroupMemory out;
  out.path = own;
  out.high_bytes = own_level->high_bytes;
  out.max_bytes = own_level->max_bytes;
  out.current_bytes = own_level->current_bytes;
  out.limit_path = own;
  std::optional<std::uint64_t> best = level_headroom(*own_level);
  for (std::string p = own; p != "/";) {
    p = parent_of(p);
    if (p == "/") break;  // the v2 root has no memory.max
    auto level = read_level(root, p);
    if (!level) return tl::unexpected(level.error());
    const auto headroom = level_headroom(*level);
    if (headroom && (!best || *headroom < *best)) {
      best = headroom;
      out.max_bytes = level->max_bytes;
      out.current_bytes = level->current_bytes;
      out.limit_path = p;
    }
  }
  return std::optional<CgroupMemory>(std::move(out));
}

}  // namespace sparkops::host
