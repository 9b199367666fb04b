#pragma once
// One model name, the way a user types it, resolved in order:
//   1. a local path: a model directory, a config.json file, a .safetensors file or index, a .gguf
//      (or a directory holding only a .gguf);
//   2. ORG/NAME[@REV] in the local Hugging Face cache (HF_HUB_CACHE, HF_HOME/hub, the default);
//   3. ORG/NAME[@REV] on the Hub (headers only, stored in the cache), unless offline;
//   4. the built-in catalogue, matched leniently (saying so); else the three nearest names.
// ResolvedModel::source says which answered.

#include <string_view>

#include "base/result.hpp"
#include "models/hf_cache.hpp"
#include "models/hub.hpp"
#include "models/model_shape.hpp"

namespace sparkops::models {

struct ResolveEnv {
  HfCacheEnv cache;
  HubAccess hub;  // offline by default
};

Result<ResolvedModel> resolve_model_name(std::string_view name, const ResolveEnv& env);

// Step 1 alone: nullopt when `name` is not a local path (and does not look like one).
std::optional<Result<ResolvedModel>> resolve_local_path(std::string_view name);

}  // namespace sparkops::models
