#pragma once
// Test helper: writes safetensors files with real headers. The data section is a sparse hole of the
// right size (never written), so a full-size 8B checkpoint costs no disk.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "models/model_shape.hpp"

namespace sparkops::models::testing {

struct FakeTensor {
  std::string name;
  std::vector<std::uint64_t> shape;
  std::string dtype = "BF16";
};

// Writes `path` with the tensors laid out back to back; returns the file size.
std::uint64_t write_safetensors(const std::filesystem::path& path,
                                const std::vector<FakeTensor>& tensors);
// Writes raw bytes: an 8-byte little-endian length then `header`, then `data_bytes` of hole.
void write_raw_safetensors(const std::filesystem::path& path, std::uint64_t declared_length,
                           const std::string& header, std::uint64_t data_bytes);

// The tensors a Hugging Face Llama-style checkpoint of `a` holds (names as in transformers).
std::vector<FakeTensor> llama_tensors(const Architecture& a);

// Writes `dir`/model-0000i-of-0000n.safetensors shards + model.safetensors.index.json.
void write_sharded_model(const std::filesystem::path& dir, const std::vector<FakeTensor>& tensors,
                         std::size_t shards);

}  // namespace sparkops::models::testing
