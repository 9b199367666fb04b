#include "term/terminal.hpp"

#include <langinfo.h>
#include <unistd.h>

#include <clocale>
#include <cstdlib>
#include <cstring>

#include "base/text.hpp"

namespace sparkops::term {

bool is_terminal(std::FILE* stream) {
  return stream != nullptr && ::isatty(::fileno(stream)) == 1;
}

bool term_is_capable() {
  const char* term = std::getenv("TERM");
  return term != nullptr && term[0] != '\0' && std::strcmp(term, "dumb") != 0;
}

bool is_interactive() {
  return term_is_capable() && ::isatty(STDIN_FILENO) == 1 && ::isatty(STDOUT_FILENO) == 1;
}

std::optional<winsize> window_size(std::initializer_list<int> fds) {
  for (const int fd : fds) {
    winsize ws{};
    if (::isatty(fd) == 1 && ::ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws;
  }
  return std::nullopt;
}

std::optional<std::size_t> output_width(std::FILE* stream) {
  if (const char* env = std::getenv("COLUMNS"); env != nullptr) {
    // A junk or zero COLUMNS is ignored, as ls does.
    if (const auto v = parse_u64(env); v && *v > 0 && *v <= 100000) {
      return static_cast<std::size_t>(*v);
    }
  }
  if (stream == nullptr) return std::nullopt;
  if (const auto ws = window_size({::fileno(stream)})) return ws->ws_col;
  return std::nullopt;
}

bool locale_is_utf8() {
  std::setlocale(LC_CTYPE, "");
  const char* codeset = nl_langinfo(CODESET);
  return codeset != nullptr && std::strcmp(codeset, "UTF-8") == 0;
}

}  // namespace sparkops::term
