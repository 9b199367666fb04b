#pragma once
// HostRoot: every /proc, /sys, /dev and /etc read goes through one of these values, never through a
// global (docs/design.md "seams"). `--root DIR` / SPARKOPS_ROOT point it at a captured tree; tests
// use fixture trees under tests/fixtures/roots/.

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "base/file_io.hpp"
#include "base/held_file.hpp"
#include "base/result.hpp"

namespace sparkops::host {

class HostRoot {
 public:
  // "/" is the live machine.
  explicit HostRoot(std::filesystem::path root = "/");

  const std::filesystem::path& root() const { return root_; }
  bool is_live() const { return root_ == "/"; }

  // Maps an absolute machine path ("/proc/meminfo") under the root.
  std::filesystem::path resolve(std::string_view absolute_path) const;

  Result<std::string> read(std::string_view absolute_path,
                           std::size_t max_bytes = kDefaultReadLimit) const;
  bool exists(std::string_view absolute_path) const;
  // Entry names (not paths) of a directory, sorted; not_found when absent.
  Result<std::vector<std::string>> list(std::string_view absolute_path) const;
  // Target of a symlink (e.g. /sys/class/hwmon/hwmon3 -> ../../devices/...), as text.
  Result<std::string> read_link(std::string_view absolute_path) const;
  // Writes to an existing regular file under the root (a /proc/sys knob) without following any
  // symlink below the root and without creating or truncating anything (output_file.hpp).
  Status write(std::string_view absolute_path, std::string_view content) const;
  // Opens a file to be re-read many times (the sampler's per-tick files).
  Result<HeldFile> hold(std::string_view absolute_path) const {
    return HeldFile::open(resolve(absolute_path));
  }

 private:
  std::filesystem::path root_;
};

// The root for this process: --root value if given, else SPARKOPS_ROOT, else "/".
HostRoot host_root_from(std::string_view flag_value, const char* env_value);

}  // namespace sparkops::host
