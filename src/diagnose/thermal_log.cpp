#include "diagnose/thermal_log.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/file_io.hpp"
#include "base/text.hpp"
#include "base/time_format.hpp"
#include "trainlog/record_reader.hpp"

namespace sparkops::diagnose {

namespace {

using Member = std::optional<double> ThermalSample::*;

enum class FieldKind { time_local, time_utc, gpu_index, pstate, reasons_hex, number, ignore };

struct Field {
  FieldKind kind = FieldKind::ignore;
  Member member = nullptr;
};

struct NamedField {
  std::string_view name;
  FieldKind kind;
  Member member;
};

// nvidia-smi query names and the extended CSV's names (docs/csv-format.md).
constexpr NamedField kFields[] = {
    {"timestamp", FieldKind::time_local, nullptr},
    {"timestamp_utc", FieldKind::time_utc, nullptr},
    {"gpu_index", FieldKind::gpu_index, nullptr},
    {"index", FieldKind::gpu_index, nullptr},
    {"temperature.gpu", FieldKind::number, &ThermalSample::gpu_temp_c},
    {"gpu_temp_c", FieldKind::number, &ThermalSample::gpu_temp_c},
    {"gpu_margin_c", FieldKind::number, &ThermalSample::gpu_margin_c},
    {"power.draw", FieldKind::number, &ThermalSample::power_w},
    {"power_w", FieldKind::number, &ThermalSample::power_w},
    {"energy_delta_j", FieldKind::number, &ThermalSample::energy_delta_j},
    {"clocks.sm", FieldKind::number, &ThermalSample::sm_clock_mhz},
    {"clocks.current.sm", FieldKind::number, &ThermalSample::sm_clock_mhz},
    {"sm_clock_mhz", FieldKind::number, &ThermalSample::sm_clock_mhz},
    {"clocks.max.sm", FieldKind::number, &ThermalSample::sm_clock_max_mhz},
    {"sm_clock_max_mhz", FieldKind::number, &ThermalSample::sm_clock_max_mhz},
    {"utilization.gpu", FieldKind::number, &ThermalSample::gpu_util_pct},
    {"gpu_util_pct", FieldKind::number, &ThermalSample::gpu_util_pct},
    {"pstate", FieldKind::pstate, nullptr},
    {"reasons_hex", FieldKind::reasons_hex, nullptr},
    {"clocks_event_reasons.active", FieldKind::reasons_hex, nullptr},
    {"clocks_throttle_reasons.active", FieldKind::reasons_hex, nullptr},
    {"throttle_sw_power_cap_s", FieldKind::number, &ThermalSample::throttle_sw_power_cap_s},
    {"throttle_sync_boost_s", FieldKind::number, &ThermalSample::throttle_sync_boost_s},
    {"throttle_sw_thermal_s", FieldKind::number, &ThermalSample::throttle_sw_thermal_s},
    {"throttle_hw_thermal_s", FieldKind::number, &ThermalSample::throttle_hw_thermal_s},
    {"throttle_hw_power_brake_s", FieldKind::number, &ThermalSample::throttle_hw_power_brake_s},
    {"host_hottest_c", FieldKind::number, &ThermalSample::host_hottest_c},
    {"spbm_sys_total_w", FieldKind::number, &ThermalSample::spbm_sys_total_w},
    {"spbm_gpu_w", FieldKind::number, &ThermalSample::spbm_gpu_w},
    {"mem_total_bytes", FieldKind::number, &ThermalSample::mem_total_bytes},
    {"mem_available_bytes", FieldKind::number, &ThermalSample::mem_available_bytes},
    {"cached_bytes", FieldKind::number, &ThermalSample::cached_bytes},
    {"psi_mem_some_delta_us", FieldKind::number, &ThermalSample::psi_mem_some_delta_us},
    {"psi_mem_full_delta_us", FieldKind::number, &ThermalSample::psi_mem_full_delta_us},
    {"major_faults_delta", FieldKind::number, &ThermalSample::major_faults_delta},
    {"gpu_process_memory_bytes", FieldKind::number, &ThermalSample::gpu_process_memory_bytes},
};

// "power.draw [W]" -> "power.draw"
std::string_view column_name(std::string_view header_cell) {
  std::string_view s = trim(header_cell);
  if (const auto br = s.find(" ["); br != std::string_view::npos) s = trim(s.substr(0, br));
  return s;
}

Field lookup(std::string_view name) {
  for (const auto& f : kFields) {
    if (f.name == name) return {f.kind, f.member};
  }
  return {};
}

bool is_absent(std::string_view v) {
  return v.empty() || v == "[N/A]" || v == "N/A" || v == "[Not Supported]" || v == "null" ||
         v == "[Unknown Error]";
}

// "11.23 W", "45", "1530 MHz", "95 %" -> number; units must be letters or '%'.
std::optional<double> cell_number(std::string_view cell) {
  const std::string_view v = trim(cell);
  if (is_absent(v)) return std::nullopt;
  const auto lead = parse_leading_double(v);
  if (!lead) return std::nullopt;
  for (const char c : trim(lead->rest)) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '%')) return std::nullopt;
  }
  return lead->value;
}

// Applies one cell; false when a required cell (the timestamp) is unusable.
bool apply(const Field& f, std::string_view cell, ThermalSample& s, bool& has_time,
           const ThermalReadOptions& options) {
  const std::string_view v = trim(cell);
  switch (f.kind) {
    case FieldKind::time_local:
    case FieldKind::time_utc: {
      const auto t = parse_timestamp(v);
      if (!t) return false;
      s.time = f.kind == FieldKind::time_local ? *t - options.tz_offset : *t;
      has_time = true;
      return true;
    }
    case FieldKind::gpu_index:
      if (const auto i = parse_i64(v)) s.gpu_index = *i;
      return true;
    case FieldKind::pstate:
      if (v.size() >= 2 && v[0] == 'P') {
        if (const auto p = parse_i64(v.substr(1))) s.pstate = *p;
      }
      return true;
    case FieldKind::reasons_hex:
      if (!is_absent(v)) {
        if (const auto m = parse_hex_u64(v)) s.reasons_mask = *m;
      }
      return true;
    case FieldKind::number:
      s.*(f.member) = cell_number(v);
      return true;
    case FieldKind::ignore:
      return true;
  }
  return true;
}

// One CSV row, RFC 4180 quoting (sparkops quotes a host sensor name holding ',' or '"').
void split_csv(std::string_view row, std::vector<std::string>& out) {
  out.clear();
  std::string cell;
  bool quoted = false;
  for (std::size_t i = 0; i < row.size(); ++i) {
    const char c = row[i];
    if (quoted) {
      if (c == '"' && i + 1 < row.size() && row[i + 1] == '"') {
        cell += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cell += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(std::move(cell));
      cell.clear();
    } else {
      cell += c;
    }
  }
  out.push_back(std::move(cell));
}

class Accumulator {
 public:
  Accumulator(ThermalLog& log, const ThermalReadOptions& options) : log_(log), options_(options) {}

  void add(const ThermalSample& s) {
    if (s.gpu_index) {
      if (!gpu_set_) {
        gpu_ = *s.gpu_index;
        gpu_set_ = true;
      }
      if (*s.gpu_index != gpu_) {
        ++log_.other_gpu_rows;
        return;
      }
    }
    if (!log_.samples.empty() && s.time < log_.samples.back().time) {
      ++log_.backwards_rows;
      return;
    }
    if (log_.samples.size() >= options_.max_samples) {
      ++log_.skipped_rows;
      return;
    }
    log_.samples.push_back(s);
  }

 private:
  ThermalLog& log_;
  const ThermalReadOptions& options_;
  std::int64_t gpu_ = 0;  // the first GPU index seen (gpu_set_)
  bool gpu_set_ = false;
};

bool parse_json_row(std::string_view line, ThermalSample& s, const ThermalReadOptions& options) {
  const auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return false;
  bool has_time = false;
  for (const auto& [key, value] : j.items()) {
    const Field f = lookup(key);
    if (f.kind == FieldKind::ignore || value.is_null()) continue;
    if (value.is_number() && f.kind == FieldKind::number) {
      s.*(f.member) = value.get<double>();
    } else if (value.is_number_integer() && f.kind == FieldKind::gpu_index) {
      s.gpu_index = value.get<std::int64_t>();
    } else if (value.is_number_unsigned() && f.kind == FieldKind::reasons_hex) {
      s.reasons_mask = value.get<std::uint64_t>();
    } else if (value.is_string()) {
      if (!apply(f, value.get_ref<const std::string&>(), s, has_time, options)) return false;
    }
  }
  return has_time;
}

}  // namespace

std::string_view thermal_format_name(ThermalFormat f) {
  switch (f) {
    case ThermalFormat::nvidia_smi:
      return "nvidia_smi";
    case ThermalFormat::extended_csv:
      return "extended_csv";
    case ThermalFormat::jsonl:
      return "jsonl";
  }
  return "nvidia_smi";
}

Result<ThermalLog> parse_thermal_log(std::string_view text, const ThermalReadOptions& options,
                                     std::string_view name) {
  ThermalLog log;
  Accumulator acc(log, options);
  auto reader = trainlog::RecordReader::from_text(text);
  trainlog::LogLine line;
  std::vector<Field> columns;
  std::vector<std::string> cells;
  bool header_seen = false;
  bool jsonl = false;
  const bool ends_clean = !text.empty() && (text.back() == '\n' || text.back() == '\r');
  while (reader.next(line)) {
    const std::string_view t = trim(line.text);
    if (t.empty() || t.front() == '#') continue;
    const bool last = line.offset + line.text.size() >= text.size();
    ThermalSample s;
    if (!header_seen) {
      header_seen = true;
      if (t.front() == '{') {
        jsonl = true;
        log.format = ThermalFormat::jsonl;
      } else {
        split_csv(t, cells);
        bool has_time = false;
        for (const auto& cell : cells) {
          const Field f = lookup(column_name(cell));
          has_time = has_time || f.kind == FieldKind::time_local || f.kind == FieldKind::time_utc;
          columns.push_back(f);
        }
        if (!has_time) {
          if (cells.size() >= 3 && parse_timestamp(cells[0])) {
            // `--format=csv,noheader`: the skill's three columns in their query order.
            columns = {lookup("timestamp"), lookup("temperature.gpu"), lookup("power.draw")};
          } else {
            return fail(Errc::malformed,
                        fmt::format("{}: not a thermal sample file: the header has no timestamp "
                                    "column (expected `timestamp,temperature.gpu,power.draw`, "
                                    "sparkops' `timestamp_utc,...` CSV or JSONL); got {}",
                                    name, quote_for_message(t, 60)));
          }
        } else {
          log.format = lookup(column_name(cells[0])).kind == FieldKind::time_utc ||
                               t.find("timestamp_utc") != std::string_view::npos
                           ? ThermalFormat::extended_csv
                           : ThermalFormat::nvidia_smi;
          continue;
        }
      }
    }
    bool ok = true;
    if (jsonl) {
      ok = parse_json_row(t, s, options);
    } else {
      split_csv(t, cells);
      if (cells.size() != columns.size()) {
        ok = false;
      } else {
        bool has_time = false;
        for (std::size_t i = 0; i < cells.size() && ok; ++i) {
          ok = apply(columns[i], cells[i], s, has_time, options);
        }
        ok = ok && has_time;
      }
    }
    if (!ok) {
      if (last && !ends_clean) {
        log.torn_last_line = true;
      } else {
        ++log.skipped_rows;
      }
      continue;
    }
    acc.add(s);
  }
  if (!header_seen)
    return fail(Errc::malformed, fmt::format("{}: empty thermal sample file", name));
  return log;
}

Result<ThermalLog> read_thermal_log(const std::filesystem::path& path,
                                    const ThermalReadOptions& options) {
  auto text = read_file(path, std::size_t{1} << 30, NonRegular::read);  // `--thermal <(...)` too
  if (!text) return tl::unexpected(text.error());
  return parse_thermal_log(*text, options, path.string());
}

std::vector<std::string> describe_thermal_notes(const ThermalLog& log) {
  std::vector<std::string> out;
  if (log.skipped_rows)
    out.push_back(fmt::format("skipped {} unreadable sample row(s)", log.skipped_rows));
  if (log.backwards_rows) {
    out.push_back(
        fmt::format("skipped {} sample row(s) whose time went backwards", log.backwards_rows));
  }
  if (log.other_gpu_rows) {
    out.push_back(fmt::format("ignored {} row(s) for other GPUs", log.other_gpu_rows));
  }
  if (log.torn_last_line) out.push_back("ignored a torn last line");
  return out;
}

}  // namespace sparkops::diagnose
