#include "sampling/writers.hpp"

#include <cstdint>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/json_text.hpp"
#include "base/text.hpp"
#include "base/time_format.hpp"
#include "sampling/sample_columns.hpp"

namespace sparkops::sampling {

namespace {

constexpr std::string_view kSmiHeader = "timestamp,temperature.gpu,power.draw";
constexpr std::string_view kNotAvailable = "[N/A]";

std::string extended_row(const SampleRow& row) {
  std::string out;
  out.reserve(320);
  bool first = true;
  for (const SampleColumn& c : sample_columns()) {
    if (!first) out += ',';
    first = false;
    append_csv_cell(out, c, row);
  }
  out += '\n';
  return out;
}

std::string jsonl_row(const SampleRow& row) {
  nlohmann::ordered_json obj = nlohmann::ordered_json::object();
  for (const SampleColumn& c : sample_columns()) obj[std::string(c.name)] = json_cell(c, row);
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
  static const std::vector<std::string_view> columns = [] {
    std::vector<std::string_view> names;
    for (const SampleColumn& c : sample_columns()) names.push_back(c.name);
    return names;
  }();
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
        rows.push_back(extended_row(sample_row(sample, gpu, index)));
        break;
      case SampleFormat::jsonl:
        rows.push_back(jsonl_row(sample_row(sample, gpu, index)));
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

}  // namespace sparkops::sampling
