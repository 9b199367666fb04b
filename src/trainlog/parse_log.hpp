#pragma once
// Entry point: a training log (any known format, auto-detected) -> StepSeries, streaming in bounded
// memory. Detection reads the first records; the parse then reads the whole input once.

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string_view>

#include "base/clock.hpp"
#include "base/progress.hpp"
#include "base/result.hpp"
#include "trainlog/record_reader.hpp"
#include "trainlog/step_series.hpp"

namespace sparkops::trainlog {

struct ParseOptions {
  std::optional<LogFormat> format;  // skip detection
  std::optional<SystemTime> start;  // --start: when the run began (anchors tqdm elapsed times)
  // The `.times` sidecar; parse_log_file uses `<log>.times` when this is unset and that file
  // exists.
  std::optional<std::filesystem::path> sidecar;
  bool use_mtime = true;  // anchor elapsed times on the file's mtime as a last resort
  std::size_t max_record_bytes = RecordReader::kDefaultMaxRecord;
  std::size_t max_steps = 1'000'000;
  std::uint64_t detect_bytes = 4 << 20;       // detection looks at least this far...
  std::uint64_t max_detect_bytes = 64 << 20;  // ...and at most this far when nothing was found
  // Called with the bytes the parse pass has read, each time it reads more (the detection pass
  // reads at most max_detect_bytes and is not reported).
  ByteProgress progress;
};

// Errors: the file cannot be read (not_found / permission_denied / io), it is empty, binary, or no
// known format was recognised (malformed; the message lists the known formats).
Result<StepSeries> parse_log_file(const std::filesystem::path& log, const ParseOptions& options);

// The same on text in memory (tests, fuzzing). `sidecar_text` stands for the sidecar file.
Result<StepSeries> parse_log_text(std::string_view text, const ParseOptions& options,
                                  std::optional<std::string_view> sidecar_text = std::nullopt,
                                  std::string_view name = "<text>");

}  // namespace sparkops::trainlog
