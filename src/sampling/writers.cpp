#include "sampling/writers.hpp"

#include <cstdint>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/json_text.hpp"
#include "base/text.hpp"
#include "base/time_format.hpp"
#include "gpu/throttle_reasons.hpp"

namespace sparkops {

namespace {

constexpr std::string_view kSmiHeader = "timestamp,temperature.gpu,power.draw";
constexpr std::string_view kNotAvailable = "[N/A]";

// One cell value: absent, an integer, a decimal already formatted, or text.
struct Cell {
  enum class Kind { absent, integer, decimal, text } kind = Kind::absent;
  std::int64_t integer = 0;
  double decimal = 0.0;
  std::string text;  // decimal: its CSV spelling; text: the string
};

Cell absent() {
  return {};
}
template <class T>
Cell integer_cell(const std::optional<T>& v) {
  if (!v) return {};
  Cell c;
  c.kind = Cell::Kind::integer;
  c.integer = static_cast<std::int64_t>(*v);
  return c;
}
Cell text_cell(std::string s) {
  Cell c;
  c.kind = Cell::Kind::text;
  c.text = std::move(s);
  return c;
}
// value / divisor printed with exactly `decimals` digits in CSV; the same rounded number in JSON.
Cell scaled_cell(double value, double divisor, int decimals) {
  Cell c;
  c.kind = Cell::Kind::decimal;
  c.text = fmt::format("{:.{}f}", value / divisor, decimals);
  c.decimal = *parse_double(c.text);
  return c;
}
template <class T>
Cell scaled(const std::optional<T>& v, double divisor, int decimals) {
  if (!v) return {};
  return scaled_cell(static_cast<double>(*v), divisor, decimals);
}
Cell seconds_cell(const std::optional<std::chrono::nanoseconds>& d) {
  if (!d) return {};
  return scaled_cell(static_cast<double>(d->count()), 1e9, 3);
}
// Millicelsius as Celsius with the shortest exact spelling: 45000 -> "45", 52375 -> "52.375".
Cell celsius_cell(const std::optional<std::int64_t>& milli) {
  if (!milli) return {};
  if (*milli % 1000 == 0) {
    Cell c;
    c.kind = Cell::Kind::integer;
    c.integer = *milli / 1000;
    return c;
  }
  Cell c = scaled_cell(static_cast<double>(*milli), 1000.0, 3);
  while (!c.text.empty() && c.text.back() == '0') c.text.pop_back();
  return c;
}

std::string csv_text(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"') out += '"';
    if (ch == '\r' || ch == '\n') {
      out += ' ';
      continue;
    }
    out += ch;
  }
  out += '"';
  return out;
}

std::vector<Cell> extended_cells(const Sample& s, const GpuReading* gpu,
                                 std::optional<unsigned> index) {
  std::vector<Cell> cells;
  cells.reserve(extended_columns().size());
  cells.push_back(text_cell(format_iso8601_utc_ms(s.wall_time)));
  cells.push_back(integer_cell(index));
  const GpuSnapshot empty_snapshot;
  const GpuSnapshot& g = gpu != nullptr ? gpu->snapshot : empty_snapshot;
  const GpuDeltas empty_deltas;
  const GpuDeltas& d = gpu != nullptr ? gpu->deltas : empty_deltas;
  cells.push_back(celsius_cell(g.temp_millicelsius));
  cells.push_back(celsius_cell(g.margin_temp_millicelsius));
  cells.push_back(scaled(g.power_microwatts, 1e6, 3));
  cells.push_back(scaled(d.energy_microjoules, 1e6, 3));
  cells.push_back(integer_cell(g.sm_clock_mhz));
  cells.push_back(integer_cell(g.sm_clock_max_mhz));
  cells.push_back(integer_cell(g.util_gpu_percent));
  cells.push_back(g.pstate ? text_cell(fmt::format("P{}", *g.pstate)) : absent());
  cells.push_back(g.clocks_event_reasons ? text_cell(fmt::format("{:#x}", *g.clocks_event_reasons))
                                         : absent());
  cells.push_back(g.clocks_event_reasons ? text_cell(reason_names_joined(*g.clocks_event_reasons))
                                         : absent());
  cells.push_back(seconds_cell(d.throttle.sw_power_cap));
  cells.push_back(seconds_cell(d.throttle.sync_boost));
  cells.push_back(seconds_cell(d.throttle.sw_thermal));
  cells.push_back(seconds_cell(d.throttle.hw_thermal));
  cells.push_back(seconds_cell(d.throttle.hw_power_brake));
  const HostReading& h = s.host;
  cells.push_back(h.hottest_sensor ? text_cell(*h.hottest_sensor) : absent());
  cells.push_back(celsius_cell(h.hottest_millicelsius));
  cells.push_back(scaled(h.spbm_sys_total_microwatts, 1e6, 3));
  cells.push_back(scaled(h.spbm_soc_pkg_microwatts, 1e6, 3));
  cells.push_back(scaled(h.spbm_cpu_gpu_microwatts, 1e6, 3));
  cells.push_back(scaled(h.spbm_gpu_microwatts, 1e6, 3));
  cells.push_back(scaled(h.spbm_dc_input_microwatts, 1e6, 3));
  cells.push_back(integer_cell(h.mem_total_bytes));
  cells.push_back(integer_cell(h.mem_free_bytes));
  cells.push_back(integer_cell(h.mem_available_bytes));
  cells.push_back(integer_cell(h.cached_bytes));
  cells.push_back(integer_cell(s.host_deltas.psi_mem_some_us));
  cells.push_back(integer_cell(s.host_deltas.psi_mem_full_us));
  cells.push_back(integer_cell(s.host_deltas.major_faults));
  cells.push_back(gpu != nullptr ? integer_cell(gpu->process_memory_bytes()) : absent());
  return cells;
}

std::string extended_row(const std::vector<Cell>& cells) {
  std::string row;
  row.reserve(256);
  bool first = true;
  for (const Cell& c : cells) {
    if (!first) row += ',';
    first = false;
    switch (c.kind) {
      case Cell::Kind::absent:
        break;
      case Cell::Kind::integer:
        row += fmt::format("{}", c.integer);
        break;
      case Cell::Kind::decimal:
        row += c.text;
        break;
      case Cell::Kind::text:
        row += csv_text(c.text);
        break;
    }
  }
  row += '\n';
  return row;
}

std::string jsonl_row(const std::vector<Cell>& cells) {
  nlohmann::ordered_json obj = nlohmann::ordered_json::object();
  const auto& names = extended_columns();
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const Cell& c = cells[i];
    const std::string key(names[i]);
    switch (c.kind) {
      case Cell::Kind::absent:
        obj[key] = nullptr;
        break;
      case Cell::Kind::integer:
        obj[key] = c.integer;
        break;
      case Cell::Kind::decimal:
        obj[key] = c.decimal;
        break;
      case Cell::Kind::text:
        obj[key] = c.text;
        break;
    }
  }
  // Invalid UTF-8 in a sensor name is replaced rather than thrown on.
  return dump_json(obj) + "\n";
}

// nvidia-smi prints temperature.gpu as an integer and power.draw as "%.2f W".
std::string smi_row(const Sample& s, const GpuReading* gpu) {
  std::string row = format_nvidia_smi_timestamp(s.wall_time);
  row += ", ";
  if (gpu != nullptr && gpu->snapshot.temp_millicelsius) {
    row += fmt::format("{}", *gpu->snapshot.temp_millicelsius / 1000);
  } else {
    row += kNotAvailable;
  }
  row += ", ";
  if (gpu != nullptr && gpu->snapshot.power_microwatts) {
    row += fmt::format("{:.2f} W", static_cast<double>(*gpu->snapshot.power_microwatts) / 1e6);
  } else {
    row += kNotAvailable;
  }
  row += '\n';
  return row;
}

std::string comment_line(const FileMeta& meta) {
  const auto field = [](const std::string& v) {
    if (v.empty()) return std::string("unknown");
    std::string out;
    for (char ch : v) out += (ch == '\n' || ch == '\r') ? ' ' : ch;
    return out;
  };
  return fmt::format("# sparkops {} host={} kernel={} driver={} device={}\n", field(meta.version),
                     field(meta.host), field(meta.kernel), field(meta.driver), field(meta.device));
}

std::string extended_header_row() {
  std::string row;
  for (const auto& name : extended_columns()) {
    if (!row.empty()) row += ',';
    row += name;
  }
  return row;
}

}  // namespace

Result<SampleFormat> parse_sample_format(std::string_view text) {
  if (text == "nvidia-smi") return SampleFormat::nvidia_smi;
  if (text == "extended") return SampleFormat::extended;
  if (text == "jsonl") return SampleFormat::jsonl;
  return fail(
      Errc::invalid_argument,
      fmt::format("--format {}: expected nvidia-smi, extended or jsonl", quote_for_message(text)));
}

std::string_view sample_format_name(SampleFormat format) {
  switch (format) {
    case SampleFormat::nvidia_smi:
      return "nvidia-smi";
    case SampleFormat::extended:
      return "extended";
    case SampleFormat::jsonl:
      return "jsonl";
  }
  return "unknown";
}

const std::vector<std::string_view>& extended_columns() {
  static const std::vector<std::string_view> columns = {"timestamp_utc",
                                                        "gpu_index",
                                                        "gpu_temp_c",
                                                        "gpu_margin_c",
                                                        "power_w",
                                                        "energy_delta_j",
                                                        "sm_clock_mhz",
                                                        "sm_clock_max_mhz",
                                                        "gpu_util_pct",
                                                        "pstate",
                                                        "reasons_hex",
                                                        "reasons",
                                                        "throttle_sw_power_cap_s",
                                                        "throttle_sync_boost_s",
                                                        "throttle_sw_thermal_s",
                                                        "throttle_hw_thermal_s",
                                                        "throttle_hw_power_brake_s",
                                                        "host_hottest_sensor",
                                                        "host_hottest_c",
                                                        "spbm_sys_total_w",
                                                        "spbm_soc_pkg_w",
                                                        "spbm_cpu_gpu_w",
                                                        "spbm_gpu_w",
                                                        "spbm_dc_input_w",
                                                        "mem_total_bytes",
                                                        "mem_free_bytes",
                                                        "mem_available_bytes",
                                                        "cached_bytes",
                                                        "psi_mem_some_delta_us",
                                                        "psi_mem_full_delta_us",
                                                        "major_faults_delta",
                                                        "gpu_process_memory_bytes"};
  return columns;
}

std::string format_file_header(SampleFormat format, const FileMeta& meta) {
  switch (format) {
    case SampleFormat::nvidia_smi:
      return std::string(kSmiHeader) + "\n";
    case SampleFormat::extended:
      return comment_line(meta) + extended_header_row() + "\n";
    case SampleFormat::jsonl:
      return {};
  }
  return {};
}

std::string format_restart_marker(SampleFormat format, const FileMeta& meta) {
  return format == SampleFormat::extended ? comment_line(meta) : std::string{};
}

std::vector<std::string> format_sample_rows(SampleFormat format, const Sample& sample) {
  std::vector<std::pair<const GpuReading*, std::optional<unsigned>>> targets;
  if (!sample.gpus.empty()) {
    for (const auto& g : sample.gpus) targets.emplace_back(&g, g.snapshot.index);
  } else if (!sample.devices.empty()) {
    for (const auto& d : sample.devices) targets.emplace_back(nullptr, d.index);
  } else {
    targets.emplace_back(nullptr, std::nullopt);
  }
  std::vector<std::string> rows;
  rows.reserve(targets.size());
  for (const auto& [gpu, index] : targets) {
    switch (format) {
      case SampleFormat::nvidia_smi:
        rows.push_back(smi_row(sample, gpu));
        break;
      case SampleFormat::extended:
        rows.push_back(extended_row(extended_cells(sample, gpu, index)));
        break;
      case SampleFormat::jsonl:
        rows.push_back(jsonl_row(extended_cells(sample, gpu, index)));
        break;
    }
  }
  return rows;
}

Status check_existing_header(SampleFormat format, std::string_view head, std::string_view path) {
  std::string_view first;
  std::string_view first_data;  // first line that is not a '#' comment
  for (std::string_view line : split_lines(head)) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (first.empty()) first = line;
    if (!line.empty() && line.front() != '#') {
      first_data = line;
      break;
    }
  }
  const auto mismatch = [&](std::string_view expected) {
    return fail(Errc::conflict,
                fmt::format("{}: exists with a different header ({}); expected {} format ({}). "
                            "Choose another --out or --format; formats are never mixed in one file",
                            path, quote_for_message(first.empty() ? first_data : first),
                            sample_format_name(format), expected));
  };
  switch (format) {
    case SampleFormat::nvidia_smi:
      if (first != kSmiHeader) return mismatch(kSmiHeader);
      return {};
    case SampleFormat::extended:
      if (!starts_with(first, "# sparkops ") || first_data != extended_header_row()) {
        return mismatch("'# sparkops ...' then the extended header row");
      }
      return {};
    case SampleFormat::jsonl: {
      const auto parsed = nlohmann::json::parse(first_data, nullptr, false);
      bool same = parsed.is_object() && parsed.size() == extended_columns().size();
      if (same) {
        for (const auto& name : extended_columns())
          same = same && parsed.contains(std::string(name));
      }
      if (!same) return mismatch("one JSON object per line with the extended keys");
      return {};
    }
  }
  return {};
}

}  // namespace sparkops
