// libFuzzer target: a sparkops config.toml -> Config::apply_toml (errors are values, toml++ parse
// exceptions must not escape).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "config/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  sparkops::config::Config config;
  (void)config.apply_toml(text, "config.toml");
  return 0;
}
