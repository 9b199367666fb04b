#pragma once
// What `top` learns about the terminal it runs in, before ncurses starts: whether there is one,
// how wide it is, and whether the locale encodes UTF-8.

#include <cstddef>

#include "tui/frame.hpp"

namespace sparkops::tui {

// Unicode glyphs when the user's locale encodes UTF-8 (LC_CTYPE from the environment).
Glyphs glyphs_from_locale();

// stdin and stdout are terminals and TERM is set and not "dumb".
bool is_terminal();

// stdout's width when it is a terminal, else kMinColumns.
std::size_t terminal_columns();

}  // namespace sparkops::tui
