#include "models/hub.hpp"

#include <algorithm>
#include <set>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/file_io.hpp"
#include "base/text.hpp"

namespace sparkops::models {

namespace fs = std::filesystem;
using nlohmann::json;

HubAccess hub_access_from_env(const HubEnv& env) {
  HubAccess h;
  const std::string off = to_lower(trim(env.hf_hub_offline));
  h.offline = off == "1" || off == "true" || off == "yes" || off == "on";
  if (!env.hf_endpoint.empty()) {
    h.endpoint = env.hf_endpoint;
    while (!h.endpoint.empty() && h.endpoint.back() == '/') h.endpoint.pop_back();
  }
  if (!trim(env.hf_token).empty()) {
    h.token = std::string(trim(env.hf_token));
  } else {
    // huggingface_hub constants: HF_TOKEN_PATH, else HF_HOME/token, else
    // ~/.cache/huggingface/token.
    fs::path file = !env.hf_token_path.empty() ? fs::path(env.hf_token_path)
                    : !env.hf_home.empty()     ? fs::path(env.hf_home) / "token"
                    : !env.home.empty() ? fs::path(env.home) / ".cache" / "huggingface" / "token"
                                        : fs::path();
    if (!file.empty()) {
      if (auto text = read_file(file, 4096)) h.token = std::string(trim(*text));
    }
  }
  return h;
}

std::pair<std::string, std::string> split_revision(std::string_view name) {
  const auto at = name.find('@');
  if (at == std::string_view::npos) return {std::string(name), ""};
  return {std::string(name.substr(0, at)), std::string(name.substr(at + 1))};
}

namespace {

constexpr std::uint64_t kMaxConfigBytes = 4ULL << 20;
constexpr std::uint64_t kMaxIndexBytes = 64ULL << 20;

std::string url_escape(std::string_view s) {
  std::string out;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) != 0 || c == '-' || c == '_' || c == '.' || c == '~') {
      out += ch;
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

bool is_commit(std::string_view s) {
  return s.size() == 40 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// A server-supplied ETag becomes a file name only when it is plain hex/alnum.
std::string blob_name(const HttpResponse& r) {
  auto it = r.headers.find("x-linked-etag");
  if (it == r.headers.end()) it = r.headers.find("etag");
  if (it == r.headers.end()) return {};
  std::string e = it->second;
  if (starts_with(e, "W/")) e = e.substr(2);
  e.erase(std::remove(e.begin(), e.end(), '"'), e.end());
  const bool plain = !e.empty() && e.size() <= 128 && std::all_of(e.begin(), e.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0;
  });
  return plain ? e : std::string();
}

struct Fetch {
  std::string_view repo;
  std::string revision;  // as requested ("main" when none)
  const HubAccess& hub;

  std::string url(std::string_view file) const {
    return fmt::format("{}/{}/resolve/{}/{}", hub.endpoint, repo, url_escape(revision), file);
  }

  // One line per failure, naming the repo: the Hub's X-Error-Code says which 401/403/404 it is.
  Error http_error(const HttpResponse& r, std::string_view file) const {
    const auto code_it = r.headers.find("x-error-code");
    const std::string code = code_it == r.headers.end() ? "" : code_it->second;
    const bool with_token = !hub.token.empty();
    if (code == "GatedRepo" || ((r.status == 401 || r.status == 403) && code.empty())) {
      return {Errc::permission_denied,
              with_token ? fmt::format("{}: gated or private repo and the token sent (HF_TOKEN or "
                                       "the token file) has no access: accept its terms on {}/{}",
                                       repo, hub.endpoint, repo)
                         : fmt::format("{}: gated or private repo: accept its terms on {}/{}, then "
                                       "set HF_TOKEN (or log in with `hf auth login`)",
                                       repo, hub.endpoint, repo)};
    }
    if (code == "RepoNotFound" || (r.status == 404 && code.empty() && file == "config.json")) {
      return {Errc::not_found, fmt::format("{}: no such model repo on {}{}", repo, hub.endpoint,
                                           with_token ? "" : " (or it is private: set HF_TOKEN)")};
    }
    if (code == "RevisionNotFound") {
      return {Errc::not_found, fmt::format("{}: no revision {} on {}", repo,
                                           quote_for_message(revision), hub.endpoint)};
    }
    if (code == "EntryNotFound" || r.status == 404) {
      return {Errc::not_found, fmt::format("{}: no {} in the repo", repo, file)};
    }
    return {Errc::io,
            fmt::format("{}: {} answered HTTP {} for {}", repo, hub.endpoint, r.status, file)};
  }

  Result<HttpResponse> get(std::string_view file,
                           std::optional<std::pair<std::uint64_t, std::uint64_t>> range,
                           std::uint64_t max_bytes) const {
    HttpRequest req;
    req.url = url(file);
    req.range = range;
    req.timeout = hub.timeout;
    req.max_body_bytes = max_bytes;
    if (!hub.token.empty()) req.headers.push_back("Authorization: Bearer " + hub.token);
    auto r = hub.client->get(req);
    if (!r) {
      const bool timeout = contains(r.error().detail, "timed out");
      return fail(r.error().code == Errc::too_large ? Errc::malformed : r.error().code,
                  timeout ? fmt::format("{}: {} did not answer within {} ms ({})", repo,
                                        hub.endpoint, hub.timeout.count(), file)
                          : fmt::format("{}: {}", repo, r.error().detail));
    }
    if (r->status != 200 && r->status != 206) return tl::unexpected(http_error(*r, file));
    return r;
  }
};

// Content-Range: bytes 0-7/123456 -> 123456.
std::optional<std::uint64_t> total_size(const HttpResponse& r) {
  const auto it = r.headers.find("content-range");
  if (it == r.headers.end()) return std::nullopt;
  const auto slash = it->second.rfind('/');
  if (slash == std::string::npos) return std::nullopt;
  return parse_u64(trim(std::string_view(it->second).substr(slash + 1)));
}

Result<RemoteShardHeader> fetch_shard_header(const Fetch& f, const std::string& shard) {
  auto head = f.get(shard, std::pair<std::uint64_t, std::uint64_t>{0, 7}, 1 << 16);
  if (!head) return tl::unexpected(head.error());
  const auto size = total_size(*head);
  if (head->status != 206 || head->body.size() != 8 || !size) {
    return fail(Errc::malformed,
                fmt::format("{}: {}: the server did not answer the 8-byte range request (HTTP {}, "
                            "{} bytes); sparkops never downloads whole shards",
                            f.repo, shard, head->status, head->body.size()));
  }
  std::uint64_t len = 0;
  for (int i = 7; i >= 0; --i) {
    len = (len << 8) | static_cast<unsigned char>(head->body[static_cast<std::size_t>(i)]);
  }
  if (len > kMaxSafetensorsHeaderBytes || len > *size - std::min<std::uint64_t>(*size, 8)) {
    return fail(Errc::malformed,
                fmt::format("{}: {}: malformed safetensors header (length field over the 100 MB "
                            "bound or past the end of the file)",
                            f.repo, shard));
  }
  auto body = f.get(shard, std::pair<std::uint64_t, std::uint64_t>{8, 8 + len - 1}, len);
  if (!body) return tl::unexpected(body.error());
  if (body->body.size() != len) {
    return fail(Errc::malformed,
                fmt::format("{}: {}: header shorter than its length field", f.repo, shard));
  }
  // Validated now so a malformed header is reported against the repo and never cached.
  if (auto parsed = parse_safetensors_header(body->body, *size - 8 - len, shard); !parsed) {
    return fail(Errc::malformed, fmt::format("{}: {}", f.repo, parsed.error().detail));
  }
  return RemoteShardHeader{*size, std::move(body->body)};
}

Status store_file(const fs::path& repo_dir, const std::string& commit, const std::string& file,
                  const HttpResponse& r) {
  std::error_code ec;
  const fs::path snap = repo_dir / "snapshots" / commit;
  fs::create_directories(snap, ec);
  if (ec) return fail(Errc::io, fmt::format("{}: {}", snap.string(), ec.message()));
  const std::string blob = blob_name(r);
  if (blob.empty()) return write_file_atomic(snap / file, r.body);
  fs::create_directories(repo_dir / "blobs", ec);
  if (auto ok = write_file_atomic(repo_dir / "blobs" / blob, r.body); !ok) return ok;
  fs::remove(snap / file, ec);
  fs::create_symlink(fs::path("..") / ".." / "blobs" / blob, snap / file, ec);
  if (ec) return fail(Errc::io, fmt::format("{}: {}", (snap / file).string(), ec.message()));
  return {};
}

}  // namespace

Result<fs::path> fetch_to_cache(std::string_view repo_id, std::string_view revision,
                                const HubAccess& hub, const HfCacheEnv& cache) {
  auto folder = hf_repo_folder(repo_id);
  if (!folder) return tl::unexpected(folder.error());
  if (hub.offline || hub.client == nullptr) {
    return fail(Errc::not_found, fmt::format("{}: not cached and HF_HUB_OFFLINE is set", repo_id));
  }
  const auto dirs = hf_cache_dirs(cache);
  if (dirs.empty()) {
    return fail(Errc::invalid_argument,
                fmt::format("{}: no cache directory (set HF_HUB_CACHE or HF_HOME)", repo_id));
  }
  const Fetch f{repo_id, revision.empty() ? "main" : std::string(revision), hub};
  auto config = f.get("config.json", std::nullopt, kMaxConfigBytes);
  if (!config) return tl::unexpected(config.error());
  // The architecture must parse before anything is cached.
  if (auto arch = parse_config_json(config->body, fmt::format("{}: config.json", repo_id)); !arch) {
    return tl::unexpected(arch.error());
  }
  std::string commit;
  if (const auto it = config->headers.find("x-repo-commit"); it != config->headers.end()) {
    commit = to_lower(trim(it->second));
  }
  if (!is_commit(commit)) commit = is_commit(f.revision) ? f.revision : std::string();
  if (commit.empty()) {
    return fail(Errc::malformed, fmt::format("{}: {} sent no X-Repo-Commit for {}", repo_id,
                                             hub.endpoint, f.revision));
  }

  std::vector<std::string> shards;
  std::optional<HttpResponse> index;
  if (auto idx = f.get("model.safetensors.index.json", std::nullopt, kMaxIndexBytes)) {
    const json j = json::parse(idx->body, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("weight_map") ||
        !j["weight_map"].is_object()) {
      return fail(Errc::malformed,
                  fmt::format("{}: model.safetensors.index.json has no \"weight_map\"", repo_id));
    }
    std::set<std::string> names;
    for (const auto& [tensor, file] : j["weight_map"].items()) {
      const std::string name = file.is_string() ? file.get<std::string>() : std::string();
      if (name.empty() || contains(name, "/") || name == ".." || name == ".") {
        return fail(Errc::malformed, fmt::format("{}: index names shard {} (not a plain file name)",
                                                 repo_id, quote_for_message(name)));
      }
      names.insert(name);
    }
    shards.assign(names.begin(), names.end());
    index = std::move(*idx);
  } else if (idx.error().code == Errc::not_found) {
    shards.push_back("model.safetensors");  // single-file checkpoints
  } else {
    return tl::unexpected(idx.error());
  }

  std::map<std::string, RemoteShardHeader> headers;
  for (const auto& shard : shards) {
    auto h = fetch_shard_header(f, shard);
    if (!h) {
      // A repo with only .bin / .gguf weights has no model.safetensors: plan from config.json.
      if (!index && h.error().code == Errc::not_found) break;
      return tl::unexpected(h.error());
    }
    headers.emplace(shard, std::move(*h));
  }

  const fs::path repo_dir = dirs.front() / *folder;
  if (auto ok = store_file(repo_dir, commit, "config.json", *config); !ok)
    return tl::unexpected(ok.error());
  if (index) {
    if (auto ok = store_file(repo_dir, commit, "model.safetensors.index.json", *index); !ok) {
      return tl::unexpected(ok.error());
    }
  }
  if (!is_commit(f.revision) && !contains(f.revision, "..")) {
    std::error_code ec;
    const fs::path ref = repo_dir / "refs" / f.revision;
    fs::create_directories(ref.parent_path(), ec);
    if (auto ok = write_file_atomic(ref, commit); !ok) return tl::unexpected(ok.error());
  }
  json side = json::object();
  for (const auto& [shard, h] : headers) {
    side[shard] = {{"file_size", h.file_size}, {"header", h.header_json}};
  }
  std::error_code ec;
  fs::create_directories(repo_dir / ".sparkops", ec);
  if (auto ok = write_file_atomic(repo_dir / ".sparkops" / (commit + ".json"), side.dump()); !ok) {
    return tl::unexpected(ok.error());
  }
  return repo_dir / "snapshots" / commit;
}

std::map<std::string, RemoteShardHeader> cached_shard_headers(const fs::path& snapshot) {
  std::map<std::string, RemoteShardHeader> out;
  const fs::path file =
      snapshot.parent_path().parent_path() / ".sparkops" / (snapshot.filename().string() + ".json");
  auto text = read_file(file, 256ULL << 20);
  if (!text) return out;
  const json j = json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return out;
  for (const auto& [shard, v] : j.items()) {
    if (!v.is_object() || !v.contains("file_size") || !v["file_size"].is_number_unsigned() ||
        !v.contains("header") || !v["header"].is_string()) {
      continue;
    }
    out.emplace(shard, RemoteShardHeader{v["file_size"].get<std::uint64_t>(),
                                         v["header"].get<std::string>()});
  }
  return out;
}

}  // namespace sparkops::models
