// libFuzzer target: OOM text (logs, tracebacks, dmesg) -> the streaming classifier, whole and fed
// in small chunks (the split point comes from the first byte), which must agree.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "ladder/oom_classifier.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto whole = sparkops::ladder::classify_oom_text(text);
  if (size < 1) return 0;
  const std::size_t chunk = 1 + data[0] % 61;
  sparkops::ladder::OomClassifier classifier;
  for (std::size_t at = 0; at < size; at += chunk) classifier.feed(text.substr(at, chunk));
  auto streamed = classifier.finish();
  if (whole.has_value() != streamed.has_value()) std::abort();
  if (whole && whole->kind != streamed->kind) std::abort();
  return 0;
}
