#pragma once
// safetensors headers and model directories: only the 8-byte little-endian header length and the
// JSON header are read, never the tensor data.

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "models/model_shape.hpp"

namespace sparkops::models {

inline constexpr std::uint64_t kMaxSafetensorsHeaderBytes = 100ULL * 1000 * 1000;

struct TensorInfo {
  std::string name;
  std::string dtype;  // "BF16", "F32", "U8", ...
  std::vector<std::uint64_t> shape;
  std::uint64_t elements = 0;
  std::uint64_t data_begin = 0;
  std::uint64_t data_end = 0;
};

struct SafetensorsHeader {
  std::vector<TensorInfo> tensors;
  std::uint64_t header_bytes = 0;  // the JSON length
  std::uint64_t data_bytes = 0;    // max data_end
  std::uint64_t elements() const;
  std::map<std::string, std::uint64_t> bytes_by_dtype() const;
};

// Pure: the JSON header text. `data_size` (file size - 8 - header length) bounds data_offsets.
//   {"model.embed_tokens.weight":{"dtype":"BF16","shape":[128256,4096],"data_offsets":[0,1050673152]}}
Result<SafetensorsHeader> parse_safetensors_header(std::string_view json, std::uint64_t data_size,
                                                   std::string_view source);

// Reads a file's header: the length is checked against 100 MB and the file size before any
// allocation of that size.
Result<SafetensorsHeader> read_safetensors_header(const std::filesystem::path& file);

// A shard's header fetched remotely (range requests) instead of read from a local file.
struct RemoteShardHeader {
  std::uint64_t file_size = 0;  // the whole shard's size on the server
  std::string header_json;      // the JSON header text
};

enum class MissingShards { error, note };

struct ModelDirOptions {
  std::filesystem::path config_path;                        // empty: dir/config.json
  MissingShards missing_shards = MissingShards::error;      // note: a cache with config files only
  std::map<std::string, RemoteShardHeader> remote_headers;  // shard name -> fetched header
  bool config_only = false;  // a config file given alone: no shard discovery beside it
};

// A directory with config.json and optionally model.safetensors.index.json / *.safetensors.
// A shard named by the index but absent (and not in remote_headers) is an Error, or a note with
// MissingShards::note.
Result<ResolvedModel> read_model_dir(const std::filesystem::path& dir,
                                     const ModelDirOptions& options = {});

}  // namespace sparkops::models
