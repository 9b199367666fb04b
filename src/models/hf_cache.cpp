#include "models/hf_cache.hpp"

#include <algorithm>
#include <system_error>

#include <fmt/format.h>

#include "base/file_io.hpp"
#include "base/text.hpp"

namespace sparkops::models {

namespace fs = std::filesystem;

std::vector<fs::path> hf_cache_dirs(const HfCacheEnv& env) {
  std::vector<fs::path> dirs;
  if (!env.hf_hub_cache.empty()) dirs.emplace_back(env.hf_hub_cache);
  if (!env.hf_home.empty()) dirs.push_back(fs::path(env.hf_home) / "hub");
  if (!env.home.empty()) dirs.push_back(fs::path(env.home) / ".cache" / "huggingface" / "hub");
  return dirs;
}

Result<fs::path> resolve_hf_snapshot(std::string_view repo_id, const HfCacheEnv& env) {
  const auto parts = split(repo_id, '/');
  if (parts.size() != 2 || parts[0].empty() || parts[1].empty() || contains(repo_id, "..")) {
    return fail(Errc::invalid_argument, fmt::format("{}: not an ORG/NAME repo id", repo_id));
  }
  const std::string folder = fmt::format("models--{}--{}", parts[0], parts[1]);
  for (const auto& dir : hf_cache_dirs(env)) {
    const fs::path repo = dir / folder;
    std::error_code ec;
    if (!fs::is_directory(repo / "snapshots", ec)) continue;
    if (auto ref = read_file(repo / "refs" / "main", 4096)) {
      const fs::path snap = repo / "snapshots" / std::string(trim(*ref));
      if (!trim(*ref).empty() && fs::is_directory(snap, ec)) return snap;
    }
    std::vector<fs::path> snaps;
    for (const auto& entry : fs::directory_iterator(repo / "snapshots", ec)) {
      if (entry.is_directory(ec)) snaps.push_back(entry.path());
    }
    if (snaps.empty()) continue;
    std::sort(snaps.begin(), snaps.end());
    return snaps.back();
  }
  return fail(Errc::not_found,
              fmt::format("{}: not in the local Hugging Face cache (no network is used)", repo_id));
}

}  // namespace sparkops::models
