#pragma once
// Whole-file reads with a size bound, and crash-safe writes. Errors name the path.

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include "base/result.hpp"

namespace sparkops {

inline constexpr std::size_t kDefaultReadLimit = 16 * 1024 * 1024;

// The Error for a failed system call on `path`: ENOENT/ENOTDIR -> not_found, EACCES/EPERM ->
// permission_denied, anything else -> io; the detail names the path, the verb and strerror.
Error errno_error(int err, const std::filesystem::path& path, std::string_view verb);

// Reads a whole file (works for /proc and /sys files that report size 0). ENOENT -> not_found,
// EACCES/EPERM -> permission_denied, more than max_bytes -> too_large. Never allocates more than
// max_bytes + one read chunk.
Result<std::string> read_file(const std::filesystem::path& path,
                              std::size_t max_bytes = kDefaultReadLimit);

// Writes to a temporary file beside `path`, fsyncs, and renames over it: readers see the old or the
// new content, never a torn one.
Status write_file_atomic(const std::filesystem::path& path, std::string_view content);

// Writes a short string to an existing file without truncation semantics (for /proc/sys knobs).
Status write_existing_file(const std::filesystem::path& path, std::string_view content);

}  // namespace sparkops
