// libFuzzer target: every training-log format's parser, forced (no detection). The first byte picks
// the format (all_formats() order), the rest is the log text.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "trainlog/parse_log.hpp"
#include "trainlog/step_series.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const auto& formats = sparkops::trainlog::all_formats();
  sparkops::trainlog::ParseOptions options;
  options.format = formats[data[0] % formats.size()];
  options.use_mtime = false;
  options.max_steps = 10'000;
  options.max_record_bytes = 64 * 1024;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  (void)sparkops::trainlog::parse_log_text(text, options, std::nullopt, "fuzz.log");
  return 0;
}
