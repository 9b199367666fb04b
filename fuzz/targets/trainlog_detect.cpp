// libFuzzer target: a training log of unknown format -> detection + parse (parse_log_text), with
// the input's first line doubling as a `.times` sidecar when it starts with '@'.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "trainlog/detect.hpp"
#include "trainlog/parse_log.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  sparkops::trainlog::ParseOptions options;
  options.use_mtime = false;
  options.max_steps = 10'000;
  options.max_record_bytes = 64 * 1024;
  std::optional<std::string_view> sidecar;
  if (!text.empty() && text.front() == '@') {
    const auto nl = text.find('\n');
    sidecar = text.substr(1, nl == std::string_view::npos ? text.size() - 1 : nl - 1);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
  }
  (void)sparkops::trainlog::parse_log_text(text, options, sidecar, "fuzz.log");
  (void)sparkops::trainlog::looks_like_trainer_state(text);
  return 0;
}
