#pragma once
// What sparkops asks of the terminal, in one place: whether a stream is one, how wide it is
// (COLUMNS, else the kernel's window size), whether TERM can do more than plain text, and whether
// the locale encodes UTF-8. Renderers below never ask: they take a width, a colour switch or a
// glyph set as an input, so goldens and pipes see the same bytes on every machine.

#include <sys/ioctl.h>

#include <cstddef>
#include <cstdio>
#include <optional>

namespace sparkops::term {

bool is_terminal(std::FILE* stream);

// TERM is set, not empty and not "dumb": escape sequences mean something there.
bool term_is_capable();

// stdin and stdout are terminals and TERM is capable: a full-screen view can run.
bool is_interactive();

// The kernel's window size (TIOCGWINSZ) of the first of `fds` that is a terminal with a width;
// nullopt when none is.
std::optional<winsize> window_size(std::initializer_list<int> fds);

// The columns a table printed on `stream` should fit: COLUMNS when it is a positive number (as
// ls and ps honour it, even on a pipe), else the terminal's width when `stream` is a terminal,
// else nullopt: no limit, tables keep their natural widths.
std::optional<std::size_t> output_width(std::FILE* stream);

// The user's locale (LC_CTYPE from the environment) encodes UTF-8.
bool locale_is_utf8();

}  // namespace sparkops::term
