#pragma once
// The extended sample columns (docs/csv-format.md "extended"), one entry each: its name (the CSV
// header cell and the JSONL key), unit, the form that says how it is printed and parsed, and the
// SampleRow field it holds. The writers print from this table, `analyze`'s reader parses through
// it, and the header row is its names in order: adding a column is one entry here, a SampleRow
// field and its line in sample_row().

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "sampling/sample_row.hpp"

namespace sparkops::sampling {

enum class CellForm {
  timestamp_utc,  // 2025-11-09T09:26:12.345Z (SampleRow::time)
  gpu_index,      // integer (SampleRow::gpu_index)
  integer,        // a whole number
  decimal3,       // exactly three decimals
  celsius,        // the shortest exact decimal of millidegrees: 45, 52.375
  pstate,         // P0..P15 (SampleRow::pstate)
  reasons_hex,    // 0x24 (SampleRow::reasons_mask)
  reason_names,   // sw_power_cap|sw_thermal, none when 0: derived from the mask, not read back
  text,           // RFC 4180 quoted when it holds ',' '"' or a line break (host_hottest_sensor)
};

struct SampleColumn {
  std::string_view name;
  std::string_view unit;  // as docs/csv-format.md's table says it
  CellForm form;
  std::optional<double> SampleRow::*number = nullptr;  // integer, decimal3 and celsius columns
  // nvidia-smi --query-gpu names read as this column (`analyze --thermal` on nvidia-smi's CSV).
  std::array<std::string_view, 3> aliases{};
};

// Every extended column, in file order.
std::span<const SampleColumn> sample_columns();
// The column named `name` or carrying it as an nvidia-smi alias; nullptr when none does.
const SampleColumn* find_sample_column(std::string_view name);

// Appends the column's CSV cell of `row` (nothing when absent).
void append_csv_cell(std::string& out, const SampleColumn& column, const SampleRow& row);
// The column's JSONL value of `row`: null when absent, the CSV's rounded number, or a string.
nlohmann::ordered_json json_cell(const SampleColumn& column, const SampleRow& row);

// Reads one CSV cell (or a JSONL string value) into `row`. Absent spellings ("", "[N/A]", "N/A",
// "[Not Supported]", "[Unknown Error]", "null") and unparseable numbers leave the field absent; a
// number may carry a unit ("11.23 W", "1530 MHz", "95 %"). False only for a timestamp that does not
// parse: a row without its time is unusable.
bool parse_cell(const SampleColumn& column, std::string_view cell, SampleRow& row);
// Reads one JSONL value that is not a string (a number; null is absent) into `row`.
void parse_json_cell(const SampleColumn& column, const nlohmann::json& value, SampleRow& row);

}  // namespace sparkops::sampling
