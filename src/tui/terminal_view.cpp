#include "tui/terminal_view.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include <curses.h>

namespace sparkops::tui {

namespace {

// Colour pair numbers are Style values + 1 (pair 0 is the terminal's default).
short pair_of(Style s) {
  return static_cast<short>(static_cast<int>(s) + 1);
}

attr_t attributes(Style s, bool colour) {
  attr_t a = A_NORMAL;
  switch (s) {
    case Style::plain:
      break;
    case Style::dim:
      a = A_DIM;
      break;
    case Style::title:
    case Style::heading:
      a = A_BOLD;
      break;
    case Style::ok:
      break;
    case Style::warn:
      a = colour ? A_NORMAL : A_BOLD;
      break;
    case Style::bad:
      a = A_BOLD;
      break;
    case Style::selected:
      a = A_REVERSE;
      break;
  }
  if (colour) a |= static_cast<attr_t>(COLOR_PAIR(pair_of(s)));
  return a;
}

void init_pairs() {
  start_color();
  use_default_colors();  // -1: keep the terminal's own background (tmux, light themes)
  init_pair(pair_of(Style::plain), -1, -1);
  init_pair(pair_of(Style::dim), -1, -1);
  init_pair(pair_of(Style::title), COLOR_CYAN, -1);
  init_pair(pair_of(Style::heading), COLOR_CYAN, -1);
  init_pair(pair_of(Style::ok), COLOR_GREEN, -1);
  init_pair(pair_of(Style::warn), COLOR_YELLOW, -1);
  init_pair(pair_of(Style::bad), COLOR_RED, -1);
  init_pair(pair_of(Style::selected), -1, -1);
}

}  // namespace

Result<std::unique_ptr<TerminalView>> TerminalView::open(ColourMode colour) {
  const char* term = std::getenv("TERM");
  SCREEN* screen = newterm(term, stdout, stdin);
  if (screen == nullptr) {
    return fail(Errc::unsupported,
                std::string("terminal type \"") + (term ? term : "") +
                    "\" is not known to ncurses (terminfo); set TERM or use --once");
  }
  set_term(screen);
  std::unique_ptr<TerminalView> view(new TerminalView());
  view->screen_ = screen;
  cbreak();
  noecho();
  nonl();
  keypad(stdscr, TRUE);
  curs_set(0);
  set_escdelay(25);
  view->colour_ = colour == ColourMode::colour && has_colors();
  if (view->colour_) init_pairs();
  return view;
}

TerminalView::~TerminalView() {
  if (screen_ == nullptr) return;
  endwin();
  delscreen(static_cast<SCREEN*>(screen_));
}

std::size_t TerminalView::columns() const {
  return static_cast<std::size_t>(std::max(COLS, 0));
}
std::size_t TerminalView::rows() const {
  return static_cast<std::size_t>(std::max(LINES, 0));
}

void TerminalView::draw(const Frame& frame) {
  erase();
  const int max_rows = LINES;
  for (std::size_t i = 0; i < frame.size() && static_cast<int>(i) < max_rows; ++i) {
    move(static_cast<int>(i), 0);
    for (const auto& span : frame[i].spans) {
      attrset(attributes(span.style, colour_));
      // The frame is already cut to COLS; addstr stops at the right edge of the last row anyway.
      addstr(span.text.c_str());
    }
  }
  attrset(A_NORMAL);
  refresh();
}

std::optional<Input> TerminalView::read(std::optional<std::chrono::milliseconds> wait) {
  const std::int64_t ms = wait ? std::clamp<std::int64_t>(wait->count(), 0, 3'600'000) : -1;
  wtimeout(stdscr, static_cast<int>(ms));
  const int ch = getch();
  if (ch == ERR) return std::nullopt;
  Input in;
  switch (ch) {
    case KEY_UP:
      in.kind = Input::Kind::up;
      break;
    case KEY_DOWN:
      in.kind = Input::Kind::down;
      break;
    case KEY_RESIZE:
      in.kind = Input::Kind::resize;
      break;
    default:
      in.kind = Input::Kind::character;
      in.ch = (ch >= 0 && ch < 128) ? static_cast<char>(ch) : '\0';
      break;
  }
  return in;
}

}  // namespace sparkops::tui
