// libFuzzer target: a config.json -> parse_config_json + parse_quantization_config, and the
// stored-bytes derivation when both parse (overflow-checked arithmetic on hostile sizes).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "models/model_shape.hpp"
#include "models/quantization.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto q = sparkops::models::parse_quantization_config(text, "config.json");
  auto a = sparkops::models::parse_config_json(text, "config.json");
  if (q && *q && a) (void)sparkops::models::derive_quantized_bytes(*a, **q);
  return 0;
}
