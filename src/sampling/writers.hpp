#pragma once
// The three sample file formats (docs/csv-format.md). Pure functions: a Sample in, text out.
//  - nvidia_smi: the skill's thermal-sample.sh contract, byte for byte as
//    `nvidia-smi --query-gpu=timestamp,temperature.gpu,power.draw --format=csv,noheader` prints.
//  - extended: a `# sparkops ...` comment line, a header row, one row per GPU per tick.
//  - jsonl: the extended columns as one JSON object per line, absent -> null.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "sampling/sample.hpp"

namespace sparkops::sampling {

enum class SampleFormat { nvidia_smi, extended, jsonl };

// "nvidia-smi" | "extended" | "jsonl"; invalid_argument otherwise.
Result<SampleFormat> parse_sample_format(std::string_view text);
std::string_view sample_format_name(SampleFormat format);

// What the extended comment line records. Empty strings print as "unknown".
struct FileMeta {
  std::string version;  // sparkops version
  std::string host;
  std::string kernel;
  std::string driver;
  std::string device;  // device names joined by '+' when several GPUs differ
};

// The extended columns' names in order (also the jsonl keys): sample_columns.hpp's table.
const std::vector<std::string_view>& extended_columns();

// The lines written at the top of a new file (each ending in '\n'); empty for jsonl.
std::string format_file_header(SampleFormat format, const FileMeta& meta);
// The lines written when appending to an existing file: the extended comment line (a restart
// marker) for extended, nothing for the other formats.
std::string format_restart_marker(SampleFormat format, const FileMeta& meta);

// The rows of one tick, each a complete line ending in '\n': one per answering GPU; when no GPU
// answers, one row per known device with the GPU cells absent, or one host-only row when the
// machine has no GPU at all.
std::vector<std::string> format_sample_rows(SampleFormat format, const Sample& sample);

// Checks that an existing file's complete lines (`head`: at least its first few lines) were written
// in `format`. conflict naming the file's header when they differ: never mix formats in one file.
Status check_existing_header(SampleFormat format, std::string_view head, std::string_view path);

}  // namespace sparkops::sampling
