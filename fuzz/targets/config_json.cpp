// libFuzzer target: a Hugging Face config.json -> parse_config_json.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "models/model_shape.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)sparkops::models::parse_config_json(text, "config.json");
  return 0;
}
