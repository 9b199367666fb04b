#pragma once
// Whole-file reads with a size bound, and crash-safe writes. Errors name the path.

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include "base/output_file.hpp"
#include "base/result.hpp"

namespace sparkops {

inline constexpr std::size_t kDefaultReadLimit = 16 * 1024 * 1024;

// The Error for a failed system call on `path`: ENOENT/ENOTDIR -> not_found, EACCES/EPERM ->
// permission_denied, anything else -> io; the detail names the path, the verb and strerror.
Error errno_error(int err, const std::filesystem::path& path, std::string_view verb);

// What read_file does with something that is not a regular file.
enum class NonRegular {
  refuse,  // a FIFO, socket or device is invalid_argument: every /proc, /sys and --root read, where
           // a FIFO planted in a captured tree would otherwise hang the reader forever
  read,    // read it too (a user's `--log <(zcat train.log.gz)`), waiting for its writer
};

// Reads a whole file (works for /proc and /sys files that report size 0). The open never blocks
// (O_NONBLOCK, so a FIFO without a writer cannot hang it). ENOENT -> not_found, EACCES/EPERM ->
// permission_denied, a directory -> io (EISDIR), with NonRegular::refuse anything else but a
// regular file -> invalid_argument, more than max_bytes -> too_large. Never allocates more than
// max_bytes + one read chunk.
Result<std::string> read_file(const std::filesystem::path& path,
                              std::size_t max_bytes = kDefaultReadLimit,
                              NonRegular non_regular = NonRegular::refuse);

// Writes to a temporary file beside `path` (an unpredictable name created with O_EXCL|O_NOFOLLOW
// in the checked directory, see output_file.hpp), fsyncs, and renames over it: readers see the old
// or the new content, never a torn one, and nothing planted in the directory is written through.
Status write_file_atomic(const std::filesystem::path& path, std::string_view content,
                         OutputTrust trust = OutputTrust::checked);

// Writes all of `content` to `fd` (retrying short writes and EINTR); errors name `path`.
Status write_all(int fd, std::string_view content, const std::filesystem::path& path);

}  // namespace sparkops
