#pragma once
// How a long reader (a multi-GB training log, a Hub download, a large OOM log) says how far it
// got. The reader calls it with the bytes consumed so far, as often as it likes; whether and how
// that reaches the user (a progress line on a terminal, nothing on a pipe) is the command's
// business (term/progress_line.hpp draws it), so readers hold no terminal code.

#include <cstdint>
#include <functional>

namespace sparkops {

using ByteProgress = std::function<void(std::uint64_t bytes_done)>;

}  // namespace sparkops
