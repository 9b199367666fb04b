#pragma once
// What cli/ knows about the terminal, in one place: the width tables fit (COLUMNS, else the
// terminal's size) and whether a stream is a terminal. Nothing below cli/ asks; renderers take
// the width as an input.

#include <cstddef>
#include <cstdio>
#include <optional>

namespace sparkops::cli {

// The columns a table printed on `stream` should fit: COLUMNS when it is a positive number (as
// ls and ps honour it, even on a pipe), else the terminal's width (TIOCGWINSZ) when `stream` is
// a terminal, else nullopt: no limit, tables keep their natural widths.
std::optional<std::size_t> output_width(std::FILE* stream);

bool is_terminal(std::FILE* stream);

}  // namespace sparkops::cli
