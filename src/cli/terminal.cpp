#include "cli/terminal.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>

#include "base/text.hpp"

namespace sparkops::cli {

bool is_terminal(std::FILE* stream) {
  return stream != nullptr && ::isatty(::fileno(stream)) == 1;
}

std::optional<std::size_t> output_width(std::FILE* stream) {
  if (const char* env = std::getenv("COLUMNS"); env != nullptr) {
    // A junk or zero COLUMNS is ignored, as ls does.
    if (const auto v = parse_u64(env); v && *v > 0 && *v <= 100000) {
      return static_cast<std::size_t>(*v);
    }
  }
  if (!is_terminal(stream)) return std::nullopt;
  struct winsize ws {};
  if (::ioctl(::fileno(stream), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return std::nullopt;
}

}  // namespace sparkops::cli
