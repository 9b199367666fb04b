#include "host/host_root.hpp"

#include <dirent.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>

#include <fmt/format.h>

#include "base/output_file.hpp"

namespace sparkops::host {

HostRoot::HostRoot(std::filesystem::path root) : root_(std::move(root)) {
  if (root_.empty()) root_ = "/";
}

std::filesystem::path HostRoot::resolve(std::string_view absolute_path) const {
  std::string_view rel = absolute_path;
  while (!rel.empty() && rel.front() == '/') rel.remove_prefix(1);
  // The text of `root_ / rel` built as one string and parsed into a path once: operator/ parsed
  // rel into a path, then root_ and the result again (most of a /sys read's instructions).
  const std::string& root = root_.native();
  std::string joined;
  joined.reserve(root.size() + 1 + rel.size());
  joined = root;
  if (!joined.empty() && joined.back() != '/') joined += '/';
  joined += rel;
  return std::filesystem::path(std::move(joined));
}

Result<std::string> HostRoot::read(std::string_view absolute_path, std::size_t max_bytes) const {
  return read_file(resolve(absolute_path), max_bytes);
}

bool HostRoot::exists(std::string_view absolute_path) const {
  std::error_code ec;
  return std::filesystem::exists(resolve(absolute_path), ec);
}

Result<std::vector<std::string>> HostRoot::list(std::string_view absolute_path) const {
  // readdir, not std::filesystem::directory_iterator: no path object built and split per entry
  // (status lists /sys/class/hwmon, its chips, thermal zones and CPUs on every run).
  const auto dir = resolve(absolute_path);
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) {
    const int err = errno;
    const Errc code = err == ENOENT || err == ENOTDIR
                          ? Errc::not_found
                          : (err == EACCES ? Errc::permission_denied : Errc::io);
    return fail(code, fmt::format("{}: cannot list: {}", dir.string(), std::strerror(err)));
  }
  std::vector<std::string> names;
  // An error in the middle of the walk (an entry vanishing, a PID exiting) ends it, not the
  // caller: what was listed is the answer.
  while (const dirent* entry = ::readdir(d)) {
    const std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    names.emplace_back(name);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

Result<std::string> HostRoot::read_link(std::string_view absolute_path) const {
  std::error_code ec;
  const auto target = std::filesystem::read_symlink(resolve(absolute_path), ec);
  if (ec) {
    return fail(Errc::not_found,
                fmt::format("{}: not a link: {}", resolve(absolute_path).string(), ec.message()));
  }
  return target.string();
}

Status HostRoot::write(std::string_view absolute_path, std::string_view content) const {
  auto fd = open_existing_beneath(root_, absolute_path);
  if (!fd) return tl::unexpected(fd.error());
  return write_all(fd->get(), content, resolve(absolute_path));
}

HostRoot host_root_from(std::string_view flag_value, const char* env_value) {
  if (!flag_value.empty()) return HostRoot(std::filesystem::path(std::string(flag_value)));
  if (env_value != nullptr && *env_value != '\0') return HostRoot(std::filesystem::path(env_value));
  return HostRoot("/");
}

}  // namespace sparkops::host
