// libFuzzer target: /proc/pressure/{cpu,io,memory} text -> parse_psi and parse_psi_totals.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "host/pressure.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto full = sparkops::host::parse_psi(text, "/proc/pressure/memory");
  // The totals-only parse accepts every text the full parse accepts, with the same totals.
  const auto totals = sparkops::host::parse_psi_totals(text, "/proc/pressure/memory");
  if (full) {
    if (!totals || totals->some.total_us != full->some.total_us ||
        totals->full.has_value() != full->full.has_value() ||
        (full->full && totals->full->total_us != full->full->total_us)) {
      std::abort();
    }
  }
  return 0;
}
