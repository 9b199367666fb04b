#pragma once
// TerminalView: the ncurses screen `top` draws on. Owns the ncurses session (newterm on the
// process's stdin/stdout, so an unknown TERM is an Error instead of ncurses exiting the process)
// and ends it in the destructor, restoring the terminal. Resizes arrive as Input::resize
// (ncurses' own SIGWINCH handling, KEY_RESIZE). Not thread-safe; one per process.

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>

#include "base/result.hpp"
#include "tui/frame.hpp"
#include "tui/top_controller.hpp"

namespace sparkops::tui {

enum class ColourMode { colour, monochrome };

class TerminalView {
 public:
  // Starts ncurses. Colour pairs only with ColourMode::colour and a terminal that has colours;
  // monochrome still uses bold and reverse video.
  static Result<std::unique_ptr<TerminalView>> open(ColourMode colour);
  ~TerminalView();
  TerminalView(const TerminalView&) = delete;
  TerminalView& operator=(const TerminalView&) = delete;

  std::size_t columns() const;
  std::size_t rows() const;
  void draw(const Frame& frame);
  // Waits up to `wait` (nullopt: until a key) for one key; nullopt when none came.
  std::optional<Input> read(std::optional<std::chrono::milliseconds> wait);

 private:
  TerminalView() = default;
  void* screen_ = nullptr;  // SCREEN*, kept opaque so this header does not pull in curses.h
  bool colour_ = false;
};

}  // namespace sparkops::tui
