// libFuzzer target: /proc/meminfo text -> parse_meminfo (never crashes; errors are values).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "host/meminfo.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto m = sparkops::host::parse_meminfo(text);
  if (m) (void)*m;
  // The sampling path's parse of the four keys: never crashes either.
  auto four = sparkops::host::parse_meminfo_sample(text);
  if (four) (void)*four;
  return 0;
}
