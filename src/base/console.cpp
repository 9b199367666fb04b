#include "base/console.hpp"

#include <fmt/format.h>

#include "base/utf8.hpp"

namespace sparkops {

void print_error(const Console& io, std::string_view message) {
  fmt::print(io.err, "sparkops: {}\n", terminal_text(message));
}

}  // namespace sparkops
