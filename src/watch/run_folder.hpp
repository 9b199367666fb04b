#pragma once
// The default run folder of `sparkops watch` (./sparkops-run-<UTC second>), claimed with mkdir so
// two runs started in the same second never share one: the second gets <base>-2, then -3, ...

#include <filesystem>

#include "base/output_file.hpp"
#include "base/result.hpp"
#include "watch/watch_session.hpp"

namespace sparkops::watch {

// Creates `base`, or the first of base-2 .. base-999 that does not exist yet, and returns it.
// mkdir is atomic, so concurrent runs cannot both claim the same name. The parent must exist.
Result<std::filesystem::path> create_fresh_run_folder(const std::filesystem::path& base);

// Makes options.dir and the log's folder ready before anything is announced or started:
// `fresh_dir` (no --dir) claims a fresh folder from options.dir as the base, and `default_log`
// (no --log) puts the log in it. A symlinked or shared folder is refused under `trust` (the files
// themselves are checked again when opened: base/output_file.hpp).
Status prepare_run_folder(WatchOptions& options, bool fresh_dir, bool default_log,
                          OutputTrust trust);

}  // namespace sparkops::watch
