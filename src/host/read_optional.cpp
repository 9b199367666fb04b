#include "host/read_optional.hpp"

#include "base/text.hpp"

namespace sparkops::host {

Result<std::optional<std::string>> read_optional(const HostRoot& root, std::string_view path,
                                                 std::size_t max_bytes) {
  auto text = root.read(path, max_bytes);
  if (text) return std::optional<std::string>(std::move(*text));
  if (text.error().code == Errc::not_found) return std::optional<std::string>();
  return tl::unexpected(text.error());
}

std::optional<unsigned> entry_index(std::string_view name, std::string_view prefix) {
  if (!name.starts_with(prefix) || name.size() == prefix.size()) return std::nullopt;
  const auto rest = name.substr(prefix.size());
  for (const char c : rest) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  const auto value = parse_u64(rest);
  if (!value || *value > 1000000) return std::nullopt;
  return static_cast<unsigned>(*value);
}

}  // namespace sparkops::host
