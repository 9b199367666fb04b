#include "sampling/sample_columns.hpp"

#include <charconv>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/text.hpp"
#include "base/time_format.hpp"
#include "gpu/throttle_reasons.hpp"

namespace sparkops::sampling {

namespace {

using F = CellForm;
using R = SampleRow;

constexpr SampleColumn kColumns[] = {
    {"timestamp_utc", "2025-11-09T09:26:12.345Z", F::timestamp_utc},
    {"gpu_index", "integer", F::gpu_index, nullptr, {"index"}},
    {"gpu_temp_c", "C", F::celsius, &R::gpu_temp_c, {"temperature.gpu"}},
    {"gpu_margin_c", "C", F::celsius, &R::gpu_margin_c},
    {"power_w", "W", F::decimal3, &R::power_w, {"power.draw"}},
    {"energy_delta_j", "J", F::decimal3, &R::energy_delta_j},
    {"sm_clock_mhz", "MHz", F::integer, &R::sm_clock_mhz, {"clocks.sm", "clocks.current.sm"}},
    {"sm_clock_max_mhz", "MHz", F::integer, &R::sm_clock_max_mhz, {"clocks.max.sm"}},
    {"gpu_util_pct", "%", F::integer, &R::gpu_util_pct, {"utilization.gpu"}},
    {"pstate", "P0..P15", F::pstate},
    {"reasons_hex",
     "0x24",
     F::reasons_hex,
     nullptr,
     {"clocks_event_reasons.active", "clocks_throttle_reasons.active"}},
    {"reasons", "sw_power_cap|sw_thermal", F::reason_names},
    {"throttle_sw_power_cap_s", "s", F::decimal3, &R::throttle_sw_power_cap_s},
    {"throttle_sync_boost_s", "s", F::decimal3, &R::throttle_sync_boost_s},
    {"throttle_sw_thermal_s", "s", F::decimal3, &R::throttle_sw_thermal_s},
    {"throttle_hw_thermal_s", "s", F::decimal3, &R::throttle_hw_thermal_s},
    {"throttle_hw_power_brake_s", "s", F::decimal3, &R::throttle_hw_power_brake_s},
    {"host_hottest_sensor", "chip/label", F::text},
    {"host_hottest_c", "C", F::celsius, &R::host_hottest_c},
    {"spbm_sys_total_w", "W", F::decimal3, &R::spbm_sys_total_w},
    {"spbm_soc_pkg_w", "W", F::decimal3, &R::spbm_soc_pkg_w},
    {"spbm_cpu_gpu_w", "W", F::decimal3, &R::spbm_cpu_gpu_w},
    {"spbm_gpu_w", "W", F::decimal3, &R::spbm_gpu_w},
    {"spbm_dc_input_w", "W", F::decimal3, &R::spbm_dc_input_w},
    {"mem_total_bytes", "bytes", F::integer, &R::mem_total_bytes},
    {"mem_free_bytes", "bytes", F::integer, &R::mem_free_bytes},
    {"mem_available_bytes", "bytes", F::integer, &R::mem_available_bytes},
    {"cached_bytes", "bytes", F::integer, &R::cached_bytes},
    {"psi_mem_some_delta_us", "us", F::integer, &R::psi_mem_some_delta_us},
    {"psi_mem_full_delta_us", "us", F::integer, &R::psi_mem_full_delta_us},
    {"major_faults_delta", "count", F::integer, &R::major_faults_delta},
    {"gpu_process_memory_bytes", "bytes", F::integer, &R::gpu_process_memory_bytes},
};

// A whole-number column as an int64: exact below 2^53 (every byte count and counter delta a machine
// gives); a value past int64's range (a crafted /proc file) saturates instead of overflowing.
std::int64_t whole(double v) {
  if (!(v > -9.2e18)) return std::numeric_limits<std::int64_t>::min();
  if (!(v < 9.2e18)) return std::numeric_limits<std::int64_t>::max();
  return static_cast<std::int64_t>(v);
}

bool is_absent(std::string_view v) {
  return v.empty() || v == "[N/A]" || v == "N/A" || v == "[Not Supported]" || v == "null" ||
         v == "[Unknown Error]";
}

// "11.23 W", "45", "1530 MHz", "95 %" -> number; units must be letters or '%'.
std::optional<double> cell_number(std::string_view v) {
  if (is_absent(v)) return std::nullopt;
  const auto lead = parse_leading_double(v);
  if (!lead) return std::nullopt;
  for (const char c : trim(lead->rest)) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '%')) return std::nullopt;
  }
  return lead->value;
}

// std::to_chars of the arguments, appended: the text of fmt's "{}" (integers), "{:x}" (base 16)
// and "{:.3f}" (fixed, 3), which the cells printed before and the writers test compares against
// on random values, without a format string parsed per cell (the sample tick's row is ~30 cells).
template <typename... Args>
void append_chars(std::string& out, Args... args) {
  char buf[400];  // the longest "{:.3f}" of a double: 309 digits, sign, point and 3 decimals
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, args...);
  if (ec == std::errc{}) out.append(buf, end);
}

void append_decimal3(std::string& out, double v) {
  append_chars(out, v, std::chars_format::fixed, 3);
}

// "{:.3f}" of the value, then the trailing zeros and point cut: 45.000 -> "45", 52.375 -> "52.375".
// Exact for millidegree readings, which have at most three decimals.
void append_celsius(std::string& out, double celsius) {
  const std::size_t start = out.size();
  append_decimal3(out, celsius);
  while (out.size() > start && out.back() == '0') out.pop_back();
  if (out.size() > start && out.back() == '.') out.pop_back();
}

void append_quoted(std::string& out, std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) {
    out += s;
    return;
  }
  out += '"';
  for (const char ch : s) {
    if (ch == '"') out += '"';
    out += (ch == '\r' || ch == '\n') ? ' ' : ch;
  }
  out += '"';
}

bool present(const SampleColumn& c, const SampleRow& row) {
  switch (c.form) {
    case F::timestamp_utc:
      return true;
    case F::gpu_index:
      return row.gpu_index.has_value();
    case F::pstate:
      return row.pstate.has_value();
    case F::reasons_hex:
    case F::reason_names:
      return row.reasons_mask.has_value();
    case F::text:
      return row.host_hottest_sensor.has_value();
    case F::integer:
    case F::decimal3:
    case F::celsius:
      return (row.*c.number).has_value();
  }
  return false;
}

}  // namespace

std::span<const SampleColumn> sample_columns() {
  return kColumns;
}

const SampleColumn* find_sample_column(std::string_view name) {
  for (const SampleColumn& c : kColumns) {
    if (c.name == name) return &c;
    for (const std::string_view alias : c.aliases) {
      if (!alias.empty() && alias == name) return &c;
    }
  }
  return nullptr;
}

void append_csv_cell(std::string& out, const SampleColumn& c, const SampleRow& row) {
  if (!present(c, row)) return;
  switch (c.form) {
    case F::timestamp_utc:
      append_iso8601_utc_ms(out, row.time);
      return;
    case F::gpu_index:
      append_chars(out, *row.gpu_index);
      return;
    case F::integer:
      append_chars(out, whole(*(row.*c.number)));
      return;
    case F::decimal3:
      append_decimal3(out, *(row.*c.number));
      return;
    case F::celsius:
      append_celsius(out, *(row.*c.number));
      return;
    case F::pstate:
      out += 'P';
      append_chars(out, *row.pstate);
      return;
    case F::reasons_hex:
      out += "0x";
      append_chars(out, *row.reasons_mask, 16);
      return;
    case F::reason_names:
      append_quoted(out, gpu::reason_names_joined(*row.reasons_mask));
      return;
    case F::text:
      append_quoted(out, *row.host_hottest_sensor);
      return;
  }
}

nlohmann::ordered_json json_cell(const SampleColumn& c, const SampleRow& row) {
  if (!present(c, row)) return nullptr;
  switch (c.form) {
    case F::gpu_index:
      return *row.gpu_index;
    case F::integer:
      return whole(*(row.*c.number));
    case F::decimal3:
    case F::celsius: {
      // The CSV's rounded number: a whole celsius stays an integer, as the CSV prints it.
      std::string text;
      append_csv_cell(text, c, row);
      if (c.form == F::celsius && text.find('.') == std::string::npos) {
        if (const auto i = parse_i64(text)) return *i;
      }
      return *parse_double(text);
    }
    case F::timestamp_utc:
      return format_iso8601_utc_ms(row.time);
    case F::pstate:
      return fmt::format("P{}", *row.pstate);
    case F::reasons_hex:
      return fmt::format("{:#x}", *row.reasons_mask);
    case F::reason_names:
      return gpu::reason_names_joined(*row.reasons_mask);
    case F::text:
      return *row.host_hottest_sensor;
  }
  return nullptr;
}

bool parse_cell(const SampleColumn& c, std::string_view cell, SampleRow& row) {
  const std::string_view v = trim(cell);
  switch (c.form) {
    case F::timestamp_utc: {
      const auto t = parse_timestamp(v);
      if (!t) return false;
      row.time = *t;
      return true;
    }
    case F::gpu_index:
      if (const auto i = parse_i64(v)) row.gpu_index = *i;
      return true;
    case F::integer:
    case F::decimal3:
    case F::celsius:
      row.*c.number = cell_number(v);
      return true;
    case F::pstate:
      if (v.size() >= 2 && v[0] == 'P') {
        if (const auto p = parse_i64(v.substr(1))) row.pstate = *p;
      }
      return true;
    case F::reasons_hex:
      if (!is_absent(v)) {
        if (const auto m = parse_hex_u64(v)) row.reasons_mask = *m;
      }
      return true;
    case F::reason_names:
      return true;  // the names follow from reasons_hex
    case F::text:
      if (!is_absent(v)) row.host_hottest_sensor = std::string(v);
      return true;
  }
  return true;
}

void parse_json_cell(const SampleColumn& c, const nlohmann::json& value, SampleRow& row) {
  if (!value.is_number()) return;
  switch (c.form) {
    case F::integer:
    case F::decimal3:
    case F::celsius:
      row.*c.number = value.get<double>();
      return;
    case F::gpu_index:
      if (value.is_number_integer()) row.gpu_index = value.get<std::int64_t>();
      return;
    case F::reasons_hex:
      if (value.is_number_unsigned()) row.reasons_mask = value.get<std::uint64_t>();
      return;
    default:
      return;
  }
}

}  // namespace sparkops::sampling
