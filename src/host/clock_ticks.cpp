#include "host/clock_ticks.hpp"

#include <unistd.h>

namespace sparkops::host {

std::uint64_t clock_ticks_per_second(const HostRoot& root) {
  const long hz = root.is_live() ? ::sysconf(_SC_CLK_TCK) : 100;
  return hz > 0 ? static_cast<std::uint64_t>(hz) : 100;
}

}  // namespace sparkops::host
