#pragma once
// One layout for every human table (procs, status workloads, analyze, the plan matrix): columns
// sized to their contents, fitted to a terminal width by priority. Pure: the same rows and width
// give the same bytes; the caller (cli/) decides the width (COLUMNS, the terminal's size, or none
// for a pipe).
//
// Fitting, when the natural widths exceed the width:
//   1. columns marked `elide` shrink towards their `min_width` by cutting the middle of long
//      cells ("python -m vllm...--port 8000": the start and the end stay, the full text is in
//      --json); nothing else is ever cut;
//   2. if that is not enough, columns are left out, highest `drop_rank` first (0 = never left
//      out), and the elided columns grow back into the room freed;
//   3. if only never-dropped columns remain and they still overflow, the lines are longer than the
//      width (a name is never cut below its min_width).
// `left_out()` names the columns step 2 removed, so the caller can say so under the table.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sparkops {

enum class Align { left, right };

struct TableColumn {
  std::string header;
  Align align = Align::left;
  int drop_rank = 0;           // 0: always shown; higher ranks are left out first
  bool elide = false;          // may be shortened by cutting the middle of its cells
  std::size_t min_width = 12;  // for elide columns: never narrower than this
};

class Table {
 public:
  // min_gap: at least this many spaces between columns (a grid of similar cells, as the plan's
  // fit matrix, reads better with 2).
  explicit Table(std::vector<TableColumn> columns, std::string indent = "",
                 std::size_t min_gap = 1);

  // One cell per column (missing trailing cells are empty).
  void add_row(std::vector<std::string> cells);

  // The table with a header line, columns separated by one space (two where a right-aligned
  // column follows a left-aligned one), no trailing spaces.
  // width: the terminal's columns; nullopt = no limit (natural widths).
  std::string render(std::optional<std::size_t> width) const;

  // The headers of the columns left out by the last render().
  const std::vector<std::string>& left_out() const { return left_out_; }

 private:
  std::vector<TableColumn> columns_;
  std::string indent_;
  std::size_t min_gap_ = 1;
  std::vector<std::vector<std::string>> rows_;
  mutable std::vector<std::string> left_out_;
};

// Display columns of UTF-8 text: one per byte that is not a continuation byte (one per code
// point for well-formed text; wide CJK glyphs count one).
std::size_t display_width(std::string_view s);

// `s` cut to at most `width` display columns by replacing its middle with "...": the start and
// the end stay readable. Unchanged when it fits.
std::string elide_middle(std::string_view s, std::size_t width);

// "(left out to fit 80 columns: PSS, AGE; --json has every field)" or "" when nothing was.
std::string left_out_note(const std::vector<std::string>& left_out, std::size_t width);

}  // namespace sparkops
