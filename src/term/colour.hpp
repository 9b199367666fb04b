#pragma once
// Colour for terminal output, in one place. On only when the stream is a terminal, NO_COLOR is
// unset or empty (no-color.org), TERM is capable (term/terminal.hpp) and the user did not turn it
// off (--no-color); goldens and pipes therefore never see an escape sequence. Renderers stay
// colourless: commands paint the rendered text line by line with paint_lines.

#include <cstdio>
#include <string>
#include <string_view>

namespace sparkops::term {

enum class Tone { ok, warn, bad, heading };

// The rule above for `stream` (a FILE* the command prints on); `turned_off`: --no-color.
bool colour_enabled(std::FILE* stream, bool turned_off);

// `text` wrapped in the SGR sequence of `tone` (bold, green, yellow, red), or unchanged when
// colour is off.
std::string paint(std::string_view text, Tone tone, bool enabled);

// Colours whole lines of rendered text by what they say: verdicts (green when it fits or
// coexists, yellow when tight, red when something must stop or it does not fit), "!" and note
// lines yellow, failures and orphans red, section headings (an upper-case word at column 0)
// bold. Unchanged when colour is off, so goldens and pipes see exactly the renderer's text.
std::string paint_lines(std::string_view text, bool enabled);

}  // namespace sparkops::term
