#pragma once
// The Hugging Face Hub, online, headers only: config.json, model.safetensors.index.json and each
// shard's safetensors header through HTTP range requests (8 bytes for the length, then the
// header) — never the weights. What is fetched is stored in the standard cache layout
// (blobs/, snapshots/<commit>/, refs/<revision>) so the next run resolves offline; the shard
// headers, which are not whole files, go beside it in models--ORG--NAME/.sparkops/<commit>.json
// (never into snapshots/, where a partial file would look like a downloaded shard).

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "models/hf_cache.hpp"
#include "models/http_client.hpp"
#include "models/safetensors.hpp"

namespace sparkops::models {

// The environment values that matter (callers pass getenv results; empty = unset).
struct HubEnv {
  std::string hf_endpoint;     // HF_ENDPOINT (mirrors, enterprise hubs)
  std::string hf_token;        // HF_TOKEN
  std::string hf_token_path;   // HF_TOKEN_PATH
  std::string hf_home;         // HF_HOME (token file at HF_HOME/token)
  std::string home;            // HOME (~/.cache/huggingface/token)
  std::string hf_hub_offline;  // HF_HUB_OFFLINE: 1/true/yes/on = never go online
};

struct HubAccess {
  bool offline = true;
  std::string endpoint = "https://huggingface.co";
  std::string token;                   // empty: anonymous
  const HttpClient* client = nullptr;  // nullptr: offline
  std::chrono::milliseconds timeout{20000};
};

// Endpoint, token (HF_TOKEN, else the token file) and the offline switch; `client` is set by the
// caller. Reads only the token file.
HubAccess hub_access_from_env(const HubEnv& env);

// "ORG/NAME" or "ORG/NAME@REV" -> repo id and revision ("" when none).
std::pair<std::string, std::string> split_revision(std::string_view name);

// Fetches the repo's config and safetensors headers into the first cache directory of `cache`
// and returns the snapshot directory. One-line Errors name the repo: permission_denied for a
// gated/private repo (saying whether a token was sent), not_found for a missing repo, revision or
// config.json, io for a transport failure or timeout, malformed for a bad header or index.
Result<std::filesystem::path> fetch_to_cache(std::string_view repo_id, std::string_view revision,
                                             const HubAccess& hub, const HfCacheEnv& cache);

// The shard headers fetch_to_cache stored beside a snapshot (empty when none were stored).
std::map<std::string, RemoteShardHeader> cached_shard_headers(
    const std::filesystem::path& snapshot);

}  // namespace sparkops::models
