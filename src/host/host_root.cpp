#include "host/host_root.hpp"

#include <algorithm>
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
  return root_ / std::filesystem::path(std::string(rel));
}

Result<std::string> HostRoot::read(std::string_view absolute_path, std::size_t max_bytes) const {
  return read_file(resolve(absolute_path), max_bytes);
}

bool HostRoot::exists(std::string_view absolute_path) const {
  std::error_code ec;
  return std::filesystem::exists(resolve(absolute_path), ec);
}

Result<std::vector<std::string>> HostRoot::list(std::string_view absolute_path) const {
  const auto dir = resolve(absolute_path);
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  if (ec) {
    const Errc code =
        ec == std::errc::no_such_file_or_directory || ec == std::errc::not_a_directory
            ? Errc::not_found
            : (ec == std::errc::permission_denied ? Errc::permission_denied : Errc::io);
    return fail(code, fmt::format("{}: cannot list: {}", dir.string(), ec.message()));
  }
  std::vector<std::string> names;
  for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
    if (ec) break;  // an entry vanishing mid-walk (a PID exiting) ends the walk, not the caller
    names.push_back(it->path().filename().string());
  }
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
