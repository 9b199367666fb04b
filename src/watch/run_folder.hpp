#pragma once
// The default run folder of `sparkops watch` (./sparkops-run-<UTC second>), claimed with mkdir so
// two runs started in the same second never share one: the second gets <base>-2, then -3, ...

#include <filesystem>

#include "base/result.hpp"

namespace sparkops {

// Creates `base`, or the first of base-2 .. base-999 that does not exist yet, and returns it.
// mkdir is atomic, so concurrent runs cannot both claim the same name. The parent must exist.
Result<std::filesystem::path> create_fresh_run_folder(const std::filesystem::path& base);

}  // namespace sparkops
