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

}  // namespace sparkops::models
