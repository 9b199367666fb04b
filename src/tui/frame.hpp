#pragma once
// Frame: the lines of one `top` screen, each a run of styled spans. The builder produces it; the
// ncurses view maps styles to colour pairs, `--once` and the goldens print frame_to_text (no
// styles, so goldens stay colourless). Every span holds text of known display width: glyphs are
// single-column by construction and text from the machine goes through `printable` first.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sparkops::tui {

enum class Style : std::uint8_t { plain, dim, title, heading, ok, warn, bad, selected };
inline constexpr std::size_t kStyleCount = 8;

struct Span {
  std::string text;
  Style style = Style::plain;
};

struct Line {
  std::vector<Span> spans;
  // Appends; returns *this so a line reads left to right.
  Line& add(std::string text, Style style = Style::plain);
  std::size_t width() const;  // display columns
};

using Frame = std::vector<Line>;

// Unicode block glyphs when the terminal's locale is UTF-8, plain ASCII otherwise (an SSH session
// with LANG=C must not show mojibake).
enum class Glyphs { unicode, ascii };

// Display columns of UTF-8 text made of single-column characters (code points counted).
std::size_t display_width(std::string_view utf8);
// Cuts to at most `columns` display columns, never inside a UTF-8 sequence.
std::string cut_to_width(std::string_view utf8, std::size_t columns);
// Cuts every line to `columns` (span by span) and the frame to `rows` lines.
void fit(Frame& frame, std::size_t columns, std::size_t rows);

// Text from the machine or a flag (process names, sensor labels, hostnames): base's terminal_text
// rule, then printable ASCII only (every other code point becomes one '?'), so no byte can move
// the cursor or change the width of a column.
std::string printable(std::string_view untrusted);

// Each line's text followed by '\n'; trailing spaces removed. With `colour`, styled spans in
// their SGR tones (term/colour.hpp): `top --once` on a terminal.
std::string frame_to_text(const Frame& frame, bool colour = false);

// A sparkline of `values` (oldest first) scaled to [lo, hi], one glyph per value, the last
// `columns` values; a gap is a space. Unicode: ▁▂▃▄▅▆▇█, ASCII: _.-=+*#@.
std::string sparkline(const std::vector<std::optional<double>>& values, double lo, double hi,
                      std::size_t columns, Glyphs glyphs);

}  // namespace sparkops::tui
