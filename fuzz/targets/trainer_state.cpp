// libFuzzer target: trainer_state.json (Hugging Face log_history) and sidecar / py-dict lines.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "trainlog/format_trainer_state.hpp"
#include "trainlog/py_dict.hpp"
#include "trainlog/sidecar.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)sparkops::trainlog::parse_trainer_state(text, "trainer_state.json");
  (void)sparkops::trainlog::parse_sidecar_line(text);
  sparkops::trainlog::PyDictEntries entries;
  (void)sparkops::trainlog::parse_py_dict(text, entries);
  return 0;
}
