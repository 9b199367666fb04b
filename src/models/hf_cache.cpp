#include "models/hf_cache.hpp"

#include <algorithm>
#include <optional>
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

Result<std::string> hf_repo_folder(std::string_view repo_id) {
  const auto parts = split(repo_id, '/');
  auto valid = [](std::string_view p) {
    // huggingface_hub validate_repo_id: letters, digits, '-', '_', '.'; no "--" or "..".
    if (p.empty() || p.size() > 96 || contains(p, "..") || contains(p, "--")) return false;
    return std::all_of(p.begin(), p.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             c == '-' || c == '_' || c == '.';
    });
  };
  if (parts.size() != 2 || !valid(parts[0]) || !valid(parts[1])) {
    return fail(Errc::invalid_argument,
                fmt::format("{}: not an ORG/NAME repo id", quote_for_message(repo_id)));
  }
  return fmt::format("models--{}--{}", parts[0], parts[1]);
}

namespace {

bool is_hex(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  });
}

std::optional<fs::path> snapshot_for(const fs::path& repo, std::string_view revision) {
  std::error_code ec;
  const std::string ref_name = revision.empty() ? "main" : std::string(revision);
  if (!contains(ref_name, "..")) {
    if (auto ref = read_file(repo / "refs" / ref_name, 4096)) {
      const std::string commit(trim(*ref));
      const fs::path snap = repo / "snapshots" / commit;
      if (is_hex(commit) && fs::is_directory(snap, ec)) return snap;
    }
  }
  std::vector<fs::path> snaps;
  for (const auto& entry : fs::directory_iterator(repo / "snapshots", ec)) {
    if (entry.is_directory(ec)) snaps.push_back(entry.path());
  }
  std::sort(snaps.begin(), snaps.end());
  if (revision.empty()) {
    if (snaps.empty()) return std::nullopt;
    return snaps.back();
  }
  if (!is_hex(revision) || (revision.size() < 7)) return std::nullopt;
  for (const auto& s : snaps) {
    if (starts_with(s.filename().string(), revision)) return s;
  }
  return std::nullopt;
}

}  // namespace

Result<fs::path> resolve_hf_snapshot(std::string_view repo_id, const HfCacheEnv& env,
                                     std::string_view revision) {
  auto folder = hf_repo_folder(repo_id);
  if (!folder) return tl::unexpected(folder.error());
  for (const auto& dir : hf_cache_dirs(env)) {
    const fs::path repo = dir / *folder;
    std::error_code ec;
    if (!fs::is_directory(repo / "snapshots", ec)) continue;
    if (auto snap = snapshot_for(repo, revision)) return *snap;
  }
  return fail(Errc::not_found, fmt::format("{}{}{}: not in the local Hugging Face cache", repo_id,
                                           revision.empty() ? "" : "@", revision));
}

}  // namespace sparkops::models
