// libFuzzer target: /proc/pressure/{cpu,io,memory} text -> parse_psi.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "host/pressure.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)sparkops::host::parse_psi(text, "/proc/pressure/memory");
  return 0;
}
