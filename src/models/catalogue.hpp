#pragma once
// The embedded model catalogue (data/models.json compiled in): exact architectures.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "models/model_shape.hpp"

namespace sparkops::models {

struct CatalogueEntry {
  std::string name;  // "Llama-3.1-8B"
  std::string repo;  // "meta-llama/Llama-3.1-8B"
  std::vector<std::string> aliases;
  Architecture arch;
  std::string note;
};

// Pure: parses the catalogue JSON text.
Result<std::vector<CatalogueEntry>> parse_catalogue(std::string_view json);
// The compiled-in catalogue (parsed once per call; callers keep the vector).
const std::vector<CatalogueEntry>& catalogue();
// Case-insensitive match on name, repo id, or alias (with or without the org prefix).
const CatalogueEntry* find_in_catalogue(std::string_view name);

// A lenient match: the org prefix, a "Meta-" prefix and fine-tune/packaging suffixes (-Instruct,
// -Chat, -it, -hf, -Base, -bnb-4bit, -GPTQ, -AWQ, -FP8, -GGUF, -Int4, ...) are ignored, so
// "Qwen/Qwen2.5-7B-Instruct" finds Qwen2.5-7B. `dropped` receives the ignored suffixes and whether
// one of them names a quantization ("GPTQ", "bnb-4bit"), in which case the catalogue's 16-bit
// shape is not the repo's stored dtype.
struct LenientMatch {
  const CatalogueEntry* entry = nullptr;
  std::vector<std::string> dropped;
  bool quantized_name = false;
};
LenientMatch find_in_catalogue_lenient(std::string_view name);

// The `count` catalogue names nearest to `name` (edit distance on the normalized names).
std::vector<std::string> nearest_catalogue_names(std::string_view name, std::size_t count = 3);

}  // namespace sparkops::models
