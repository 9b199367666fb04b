#pragma once
// Allocation-free walking of /proc and /sys text for the readers a sampling loop calls every tick
// (meminfo, vmstat, PSI): lines and space/tab-separated tokens as views into the text, the same
// pieces base/text.hpp's split_lines and split_ws return, without building vectors.

#include <string_view>

namespace sparkops::host::proc_text {

// The next line of `rest` (without its '\n'), advancing `rest` past it; false when none is left.
inline bool next_line(std::string_view& rest, std::string_view& line) {
  if (rest.empty()) return false;
  const std::size_t nl = rest.find('\n');
  line = rest.substr(0, nl);
  rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
  return true;
}

// The next token of `rest` separated by spaces or tabs, advancing `rest`; false when none is left.
inline bool next_token(std::string_view& rest, std::string_view& token) {
  std::size_t i = 0;
  while (i < rest.size() && (rest[i] == ' ' || rest[i] == '\t')) ++i;
  std::size_t end = i;
  while (end < rest.size() && rest[end] != ' ' && rest[end] != '\t') ++end;
  rest.remove_prefix(end);
  if (end == i) return false;
  token = std::string_view(rest.data() - (end - i), end - i);
  return true;
}

}  // namespace sparkops::host::proc_text
