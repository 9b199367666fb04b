#include "models/resolve.hpp"

#include <cerrno>
#include <cstring>
#include <system_error>

#include <fmt/format.h>
#include <sys/stat.h>

#include "base/text.hpp"
#include "models/catalogue.hpp"
#include "models/gguf.hpp"
#include "models/safetensors.hpp"

namespace sparkops::models {

namespace fs = std::filesystem;

namespace {

bool looks_like_path(std::string_view name) {
  return starts_with(name, "/") || starts_with(name, "./") || starts_with(name, "../") ||
         starts_with(name, "~") || name == "." || name == ".." || ends_with(name, ".json") ||
         ends_with(name, ".gguf") || ends_with(name, ".safetensors");
}

Result<ResolvedModel> from_gguf(const fs::path& file) {
  auto parsed = read_gguf(file);
  if (!parsed) return tl::unexpected(parsed.error());
  auto g = gguf_model(std::move(*parsed), file.string());
  if (!g) return tl::unexpected(g.error());
  ResolvedModel m;
  m.source = ModelSource::gguf;
  m.location = file.string();
  m.shape = std::move(g->shape);
  if (m.shape.name.empty()) m.shape.name = file.stem().string();
  std::error_code ec;
  m.shards.push_back({file.filename().string(), fs::file_size(file, ec)});
  m.checkpoint_bytes = g->file.weight_bytes;
  m.notes.push_back(fmt::format("GGUF v{} {} ({}), {} tensors", g->file.version, g->architecture,
                                g->file_type.empty() ? "mixed types" : g->file_type,
                                g->file.tensors.size()));
  m.gguf = std::make_shared<const GgufFile>(std::move(g->file));
  return m;
}

Result<ResolvedModel> from_directory(const fs::path& dir) {
  std::error_code ec;
  if (fs::exists(dir / "config.json", ec)) return read_model_dir(dir);
  std::vector<fs::path> ggufs;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".gguf") ggufs.push_back(entry.path());
  }
  if (ggufs.size() == 1) return from_gguf(ggufs.front());
  if (ggufs.size() > 1) {
    return fail(Errc::invalid_argument,
                fmt::format("{}: {} .gguf files and no config.json: name the one to plan",
                            dir.string(), ggufs.size()));
  }
  return fail(Errc::not_found,
              fmt::format("{}: no config.json or .gguf in this directory", dir.string()));
}

}  // namespace

std::optional<Result<ResolvedModel>> resolve_local_path(std::string_view name) {
  const fs::path p{std::string(name)};
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) {
    const int err = errno;
    if (err == ELOOP) {
      return Result<ResolvedModel>(fail(
          Errc::invalid_argument, fmt::format("{}: symbolic link loop", quote_for_message(name))));
    }
    if (err == EACCES) {
      return Result<ResolvedModel>(fail(
          Errc::permission_denied, fmt::format("{}: permission denied", quote_for_message(name))));
    }
    if (looks_like_path(name)) {
      return Result<ResolvedModel>(fail(
          Errc::not_found, fmt::format("{}: no such file or directory", quote_for_message(name))));
    }
    return std::nullopt;
  }
  if (S_ISDIR(st.st_mode)) return from_directory(p);
  if (!S_ISREG(st.st_mode)) {
    return Result<ResolvedModel>(
        fail(Errc::invalid_argument,
             fmt::format("{}: not a regular file or directory", quote_for_message(name))));
  }
  const std::string file = p.filename().string();
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (ends_with(file, ".gguf")) return from_gguf(p);
  if (ends_with(file, ".safetensors") || file == "model.safetensors.index.json") {
    std::error_code ec;
    if (!fs::exists(dir / "config.json", ec)) {
      return Result<ResolvedModel>(
          fail(Errc::not_found, fmt::format("{}: no config.json beside it (the architecture "
                                            "comes from config.json)",
                                            p.string())));
    }
    auto m = read_model_dir(dir);
    if (m) {
      m->source = ModelSource::safetensors;
      m->location = p.string();
    }
    return m;
  }
  if (ends_with(file, ".json")) {
    // A config.json (or a renamed copy): shards are read beside it only when it is config.json.
    ModelDirOptions o;
    o.config_path = p;
    o.missing_shards = MissingShards::note;
    o.config_only = file != "config.json";
    auto m = read_model_dir(dir, o);
    if (m) {
      m->source = ModelSource::config_file;
      m->location = p.string();
      m->shape.name = dir.filename().string().empty() ? file : dir.filename().string();
    }
    return m;
  }
  return Result<ResolvedModel>(fail(
      Errc::invalid_argument,
      fmt::format("{}: not a model directory, config.json, .safetensors or .gguf", p.string())));
}

Result<ResolvedModel> resolve_model_name(std::string_view raw, const ResolveEnv& env) {
  const std::string name(trim(raw));
  if (name.empty()) return fail(Errc::invalid_argument, "model: empty name");
  if (auto local = resolve_local_path(name)) return std::move(*local);

  // Named members, not a structured binding: clang 14 (the fuzz build) cannot capture a binding
  // in the lambda below.
  const auto split = split_revision(name);
  const auto& repo = split.first;
  const auto& revision = split.second;
  const bool repo_like = hf_repo_folder(repo).has_value();
  std::string hub_error;
  Errc hub_code = Errc::not_found;
  if (repo_like) {
    auto read_snapshot = [&](const fs::path& snap, ModelSource source) -> Result<ResolvedModel> {
      ModelDirOptions o;
      o.missing_shards = MissingShards::note;
      o.remote_headers = cached_shard_headers(snap);
      auto m = read_model_dir(snap, o);
      if (!m) return m;
      m->source = source;
      m->shape.name = repo;
      m->revision = snap.filename().string();
      if (!o.remote_headers.empty()) {
        m->notes.push_back(
            "shard headers from the Hub (range requests), cached beside the snapshot");
      }
      return m;
    };
    if (auto snap = resolve_hf_snapshot(repo, env.cache, revision)) {
      return read_snapshot(*snap, ModelSource::hf_cache);
    }
    if (!env.hub.offline && env.hub.client != nullptr) {
      auto snap = fetch_to_cache(repo, revision, env.hub, env.cache);
      if (snap) return read_snapshot(*snap, ModelSource::hub);
      // A malformed answer is reported as is. Gated, missing, unreachable or slow: the catalogue
      // may still know the architecture (noted with the Hub's line); if not, the Hub's line is the
      // error.
      if (snap.error().code == Errc::malformed) return tl::unexpected(snap.error());
      hub_error = snap.error().detail;
      hub_code = snap.error().code;
    }
  }
  const auto match = find_in_catalogue_lenient(name);
  if (match.entry != nullptr) {
    ResolvedModel m;
    m.source = ModelSource::catalogue;
    m.shape.name = match.entry->name;
    m.shape.arch = match.entry->arch;
    m.shape.params = count_params(match.entry->arch);
    if (!match.dropped.empty()) {
      m.notes.push_back(
          fmt::format("{}: planned with the catalogue's {} architecture ({} "
                      "ignored: same shape)",
                      name, match.entry->name, fmt::join(match.dropped, "-")));
    }
    if (match.quantized_name) {
      m.notes.push_back(
          "the name says the weights are quantized, the catalogue holds the 16-bit shape: for "
          "the stored dtype give the repo online or its config.json");
    }
    if (!hub_error.empty()) m.notes.push_back("the Hub did not answer with the repo: " + hub_error);
    return m;
  }
  if (!hub_error.empty() && hub_code != Errc::not_found) return fail(hub_code, hub_error);
  const auto near = nearest_catalogue_names(name, 3);
  std::string where = repo_like ? (env.hub.offline || env.hub.client == nullptr
                                       ? "not in the Hugging Face cache (offline), "
                                       : "not on the Hub, not cached, ")
                                : "not a local path, ";
  if (!hub_error.empty()) where = hub_error + "; ";
  return fail(Errc::not_found,
              fmt::format("{}: unknown model ({}not in the catalogue; nearest: {}; see `sparkops "
                          "plan --list`)",
                          name, where, fmt::join(near, ", ")));
}

}  // namespace sparkops::models
