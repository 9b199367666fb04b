// libFuzzer target: the beginning of a .gguf file -> parse_gguf, then gguf_model on success. The
// same bytes are also parsed as the prefix of a much longer file (the "read more" path).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "models/gguf.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (auto f = sparkops::models::parse_gguf(bytes, size, "fuzz.gguf")) {
    (void)sparkops::models::gguf_model(std::move(*f), "fuzz.gguf");
  }
  if (auto f = sparkops::models::parse_gguf(bytes, UINT64_MAX / 2, "fuzz.gguf")) {
    (void)sparkops::models::gguf_model(std::move(*f), "fuzz.gguf");
  }
  return 0;
}
