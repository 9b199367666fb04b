#include "trainlog/py_dict.hpp"

#include "base/text.hpp"
#include "trainlog/log_text.hpp"

namespace sparkops::trainlog {

namespace {

// Reads a quoted string starting at s[p] (' or "); returns its content and moves p past it.
bool read_quoted(std::string_view s, std::size_t& p, std::string_view& out) {
  if (p >= s.size() || (s[p] != '\'' && s[p] != '"')) return false;
  const char q = s[p];
  const std::size_t close = s.find(q, p + 1);
  if (close == std::string_view::npos) return false;
  out = s.substr(p + 1, close - p - 1);
  p = close + 1;
  return true;
}

void skip_spaces(std::string_view s, std::size_t& p) {
  while (p < s.size() && s[p] == ' ') ++p;
}

}  // namespace

bool parse_py_dict(std::string_view line, PyDictEntries& out) {
  out.clear();
  const std::size_t open = line.find('{');
  if (open == std::string_view::npos) return false;
  std::size_t p = open + 1;
  for (;;) {
    skip_spaces(line, p);
    if (p < line.size() && line[p] == '}') return !out.empty();
    std::string_view key;
    if (!read_quoted(line, p, key)) return false;
    skip_spaces(line, p);
    if (p >= line.size() || line[p] != ':') return false;
    ++p;
    skip_spaces(line, p);
    std::string_view value;
    if (p < line.size() && (line[p] == '\'' || line[p] == '"')) {
      if (!read_quoted(line, p, value)) return false;
    } else {
      // A loop: find_first_of with two characters calls memchr once per byte.
      std::size_t stop = p;
      while (stop < line.size() && line[stop] != ',' && line[stop] != '}') ++stop;
      if (stop == line.size()) return false;
      value = line.substr(p, stop - p);
      p = stop;
    }
    if (const auto v = parse_decimal(value)) out.emplace_back(key, *v);
    skip_spaces(line, p);
    if (p >= line.size()) return false;
    if (line[p] == ',') {
      ++p;
      continue;
    }
    if (line[p] == '}') return !out.empty();
    return false;
  }
}

const double* dict_value(const PyDictEntries& entries, std::string_view key) {
  for (const auto& [k, v] : entries) {
    if (k == key) return &v;
  }
  return nullptr;
}

}  // namespace sparkops::trainlog
