#pragma once
// Running a helper program (nvidia-smi) safely: found on a PATH value we search ourselves, started
// with posix_spawn and an argv (never a shell), stdin from /dev/null, stdout and stderr captured
// up to a byte bound, killed (SIGKILL) when it outlives a timeout.

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"

namespace sparkops::gpu {

// The first "<dir>/<name>" that is an executable regular file, for each non-empty absolute dir of
// the ':'-separated `path_env`. A `name` containing '/' is not searched (nullopt).
std::optional<std::string> find_on_path(std::string_view name, std::string_view path_env);

struct CapturedOutput {
  int exit_code = -1;  // 128 + n when killed by signal n
  std::string out;
  std::string err;
};

// Runs argv (argv[0] an existing path) with the caller's environment. Errors: io when it cannot be
// started, timed_out when it outlives `timeout` (the child is killed and reaped: a child stuck in
// the kernel delays the reap, so callers that must not block run this under a watchdog), or
// too_large when it wrote more than max_bytes on either stream.
Result<CapturedOutput> run_captured(const std::vector<std::string>& argv,
                                    std::chrono::milliseconds timeout, std::size_t max_bytes);

}  // namespace sparkops::gpu
