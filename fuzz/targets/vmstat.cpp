// libFuzzer target: /proc/vmstat text -> parse_vmstat.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "host/vmstat.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)sparkops::host::parse_vmstat(text);
  return 0;
}
