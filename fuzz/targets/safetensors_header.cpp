// libFuzzer target: a .safetensors file's beginning: 8-byte little-endian header length, the JSON
// header, then data. The data size handed to the parser is what follows the header, as
// read_safetensors_header computes it; a length beyond the input is clamped like a short file.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "models/safetensors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 8) return 0;
  std::uint64_t len = 0;
  for (int i = 7; i >= 0; --i) len = (len << 8) | data[i];
  const std::size_t rest = size - 8;
  const std::size_t header = len < rest ? static_cast<std::size_t>(len) : rest;
  const std::string_view json(reinterpret_cast<const char*>(data) + 8, header);
  (void)sparkops::models::parse_safetensors_header(json, rest - header, "fuzz.safetensors");
  // The same bytes with an absurd data size (a header pointing past a huge file).
  (void)sparkops::models::parse_safetensors_header(json, UINT64_MAX, "fuzz.safetensors");
  return 0;
}
