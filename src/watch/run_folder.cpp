#include "watch/run_folder.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace sparkops::watch {

Result<std::filesystem::path> create_fresh_run_folder(const std::filesystem::path& base) {
  for (int n = 1; n < 1000; ++n) {
    const std::filesystem::path candidate =
        n == 1 ? base : std::filesystem::path(fmt::format("{}-{}", base.string(), n));
    if (::mkdir(candidate.c_str(), 0777) == 0) return candidate;  // the umask narrows it
    if (errno != EEXIST) {
      return fail(Errc::io, fmt::format("{}: cannot create the run folder: {}", candidate.string(),
                                        std::strerror(errno)));
    }
  }
  return fail(Errc::conflict,
              fmt::format("{}: 999 run folders of this second exist already", base.string()));
}

Status prepare_run_folder(WatchOptions& options, bool fresh_dir, bool default_log,
                          OutputTrust trust) {
  if (fresh_dir) {  // the default folder: one per run, even two in the same second
    auto fresh = create_fresh_run_folder(options.dir);
    if (!fresh) return tl::unexpected(fresh.error());
    options.dir = *fresh;
    if (default_log) options.log = options.dir / "train.log";
  }
  std::error_code ec;
  std::filesystem::create_directories(options.dir, ec);
  if (ec) {
    return fail(Errc::io, fmt::format("{}: cannot create the run folder: {}", options.dir.string(),
                                      ec.message()));
  }
  if (options.log.has_parent_path())
    std::filesystem::create_directories(options.log.parent_path(), ec);
  for (const auto& dir : {options.dir, output_parent(options.log)}) {
    if (auto checked = open_output_dir(dir, trust); !checked)
      return tl::unexpected(checked.error());
  }
  return {};
}

}  // namespace sparkops::watch
