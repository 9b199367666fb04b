// libFuzzer target: plain `nvidia-smi` table output -> parse_smi_table.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "gpu/smi_parse.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)sparkops::gpu::parse_smi_table(text);
  return 0;
}
