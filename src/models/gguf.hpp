#pragma once
// GGUF files (llama.cpp, Ollama): the header only — version, metadata key/values and the tensor
// table — never the tensor data. Layout per ggml's gguf.h / docs/gguf.md (v2 and v3: 64-bit counts
// and lengths); ggml type block sizes per ggml-common.h (docs/models.md lists them). The serving
// plan reads weights and the attention shape for the KV cache from GgufModel.

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/result.hpp"
#include "models/model_shape.hpp"

namespace sparkops::models {

// A ggml tensor type: `block` values stored in `bytes` bytes (ggml_blck_size / ggml_type_size).
struct GgmlType {
  std::uint32_t id = 0;
  std::string_view name;  // "Q4_K", "F16", ...
  std::uint64_t block = 1;
  std::uint64_t bytes = 0;
};
// nullopt for ids ggml removed (4, 5, 31-33, 36-38) or does not define (yet).
std::optional<GgmlType> ggml_type(std::uint32_t id);

// llama.cpp's llama_ftype (general.file_type) name: 15 -> "Q4_K_M"; nullopt when unknown.
std::optional<std::string_view> gguf_file_type_name(std::uint64_t file_type);

struct GgufArrayInfo {
  std::uint32_t element_type = 0;  // GGUF value type of the elements
  std::uint64_t count = 0;
  std::optional<std::uint64_t> max_uint;  // largest element for integer arrays (per-layer counts)
};
// One metadata value: unsigned, signed, float, bool, string, or an array (contents not kept).
using GgufValue =
    std::variant<std::uint64_t, std::int64_t, double, bool, std::string, GgufArrayInfo>;

struct GgufTensor {
  std::string name;
  std::vector<std::uint64_t> shape;  // ggml order: ne[0] is the contiguous dimension
  std::uint32_t type = 0;
  std::uint64_t offset = 0;  // from the start of the data section
  std::uint64_t elements = 0;
  std::uint64_t bytes = 0;  // (ne[0] / block) * type bytes * ne[1] * ...
};

struct GgufFile {
  std::uint32_t version = 0;
  std::map<std::string, GgufValue> metadata;
  std::vector<GgufTensor> tensors;
  std::uint64_t alignment = 32;
  std::uint64_t data_offset = 0;  // where the data section starts in the file
  std::uint64_t weight_bytes = 0;
  std::uint64_t weight_elements = 0;
  std::map<std::string, std::uint64_t> bytes_by_type;  // "Q4_K" -> bytes

  std::optional<std::uint64_t> uint_value(const std::string& key) const;
  std::optional<std::string> string_value(const std::string& key) const;
};

inline constexpr std::uint64_t kMaxGgufTensors = 1ULL << 20;
inline constexpr std::uint64_t kMaxGgufKeyValues = 1ULL << 20;
inline constexpr std::uint64_t kMaxGgufHeaderBytes = 512ULL << 20;

// Pure: `bytes` is the file's beginning, `file_size` its full size (bounds tensor data). When the
// header runs past `bytes` while the file is longer, the Error is too_large (read more and retry);
// anything else that does not follow the format is malformed, naming `source` and the byte offset.
Result<GgufFile> parse_gguf(std::string_view bytes, std::uint64_t file_size,
                            std::string_view source);

// Reads as much of the file as the header needs (up to kMaxGgufHeaderBytes).
Result<GgufFile> read_gguf(const std::filesystem::path& file);

// A GGUF file as a model: the architecture from {arch}.block_count, embedding_length,
// feed_forward_length, attention.head_count(_kv), attention.key_length, expert_count,
// expert_used_count and the vocabulary; the stored weights as a Quantization (method gguf).
struct GgufModel {
  ModelShape shape;
  std::string architecture;                     // general.architecture: "llama", "qwen2", "gpt-oss"
  std::optional<std::uint64_t> context_length;  // {arch}.context_length
  std::string file_type;  // "Q4_K_M" (general.file_type), or the dominant type
  GgufFile file;
};
Result<GgufModel> gguf_model(GgufFile file, std::string_view source);

}  // namespace sparkops::models
