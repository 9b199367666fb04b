#include "watch/run_folder.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace sparkops {

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

}  // namespace sparkops
