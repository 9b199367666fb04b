#pragma once
// Reader for the thermal sample files (docs/csv-format.md):
//  (a) the skill's nvidia-smi file: header `timestamp,temperature.gpu,power.draw`, rows
//      `2025/11/09 09:26:12.345, 45, 11.23 W` (`[N/A]` when unsupported), local time of the
//      sampling machine; also the real `nvidia-smi --query-gpu=... --format=csv` header
//      `timestamp, temperature.gpu, power.draw [W]` with unit-less values;
//  (b) sparkops' extended CSV: optional `# sparkops ...` comment, then
//  `timestamp_utc,gpu_index,...`; (c) JSONL with the extended CSV's keys (absent: key omitted or
//  null).
// Columns are read by name, never position, through the writers' column table
// (sampling/sample_columns.hpp: the extended names and the nvidia-smi query names it lists as
// aliases) into SampleRow, the record the writers print from; unknown columns are ignored; a torn
// last line, rows with the wrong cell count and rows going back in time are skipped and counted.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.hpp"
#include "base/result.hpp"
#include "sampling/sample_row.hpp"

namespace sparkops::diagnose {

enum class ThermalFormat { nvidia_smi, extended_csv, jsonl };
std::string_view thermal_format_name(ThermalFormat f);

struct ThermalLog {
  ThermalFormat format = ThermalFormat::nvidia_smi;
  std::vector<sampling::SampleRow> samples;  // one GPU (the first index seen), in time order
  std::uint64_t skipped_rows = 0;    // wrong cell count, bad timestamp, not JSON
  std::uint64_t backwards_rows = 0;  // timestamp earlier than the previous row
  std::uint64_t other_gpu_rows = 0;  // rows for other GPU indices
  bool torn_last_line = false;
};

struct ThermalReadOptions {
  // nvidia-smi stamps local time; its timestamps are read as UTC minus this offset (east positive).
  std::chrono::seconds tz_offset{0};
  std::size_t max_samples = 2'000'000;
};

// Errors: malformed with a message naming the input when the header is neither format.
Result<ThermalLog> parse_thermal_log(std::string_view text, const ThermalReadOptions& options,
                                     std::string_view name = "<thermal>");
Result<ThermalLog> read_thermal_log(const std::filesystem::path& path,
                                    const ThermalReadOptions& options);

// Describes skipped rows for the summary; empty when nothing was skipped.
std::vector<std::string> describe_thermal_notes(const ThermalLog& log);

}  // namespace sparkops::diagnose
