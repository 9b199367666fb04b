// libFuzzer target: `nvidia-smi -q` output -> parse_smi_q.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "gpu/smi_parse.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)sparkops::gpu::parse_smi_q(text);
  return 0;
}
