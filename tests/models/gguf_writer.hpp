#pragma once
// Test helper: writes GGUF v3 files the way gguf-py's GGUFWriter lays them out (header, key/value
// metadata, tensor infos, padding to general.alignment, then the data as a sparse hole of the
// right size, so a 70B-sized file costs no disk).

#include <cstdint>
#include <filesystem>
#include <string>
#include <variant>
#include <vector>

namespace sparkops::models::testing {

struct GgufKv {
  std::string key;
  std::variant<std::uint32_t, std::uint64_t, float, std::string, std::vector<std::string>,
               std::vector<std::uint32_t>>
      value;
};

struct GgufTensorSpec {
  std::string name;
  std::vector<std::uint64_t> ne;  // ggml order
  std::uint32_t type = 0;
};

// The tensor bytes use the block table passed per type: {type -> (block, bytes)}.
std::string gguf_header_bytes(const std::vector<GgufKv>& kvs,
                              const std::vector<GgufTensorSpec>& tensors,
                              std::uint64_t* data_bytes = nullptr, std::uint32_t version = 3);
void write_gguf(const std::filesystem::path& path, const std::vector<GgufKv>& kvs,
                const std::vector<GgufTensorSpec>& tensors);

}  // namespace sparkops::models::testing
