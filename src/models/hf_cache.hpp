#pragma once
// Hugging Face hub cache resolution, offline only: models--ORG--NAME/snapshots/<rev>/ under
// HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/huggingface/hub.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"

namespace sparkops::models {

// The environment values that matter (callers pass getenv results; empty = unset).
struct HfCacheEnv {
  std::string hf_hub_cache;
  std::string hf_home;
  std::string home;
};

// The cache directories in priority order (only those whose variables are set).
std::vector<std::filesystem::path> hf_cache_dirs(const HfCacheEnv& env);

// "org/name" -> the snapshot directory. Without `revision`: the commit refs/main names when
// present, else the lexicographically last snapshot. With one: refs/<revision> (a branch or tag),
// else a snapshot named by the commit or a prefix of at least 7 hex digits. not_found when the
// repo (or revision) is not cached; invalid_argument when `repo_id` is not of the form ORG/NAME.
Result<std::filesystem::path> resolve_hf_snapshot(std::string_view repo_id, const HfCacheEnv& env,
                                                  std::string_view revision = {});

// "models--ORG--NAME" for a valid repo id; invalid_argument otherwise (also for "..", empty
// parts, characters the Hub does not allow in names).
Result<std::string> hf_repo_folder(std::string_view repo_id);

}  // namespace sparkops::models
