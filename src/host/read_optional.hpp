#pragma once
// Small helpers shared by the host readers: a missing file is "absent", not an error.

#include <optional>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "host/host_root.hpp"

namespace sparkops::host {

// The file's content, nullopt when it (or a parent directory) does not exist. Other failures
// (permission_denied, io, too_large) stay errors for the caller to turn into notes.
Result<std::optional<std::string>> read_optional(const HostRoot& root, std::string_view path,
                                                 std::size_t max_bytes = kDefaultReadLimit);

// Numeric suffix of a directory entry such as "hwmon12" or "thermal_zone3" (prefix given);
// nullopt when the name does not match prefix + digits.
std::optional<unsigned> entry_index(std::string_view name, std::string_view prefix);

}  // namespace sparkops::host
