#include "gpu/smi_parse.hpp"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "base/checked_cast.hpp"
#include "base/text.hpp"
#include "base/units.hpp"

namespace sparkops::gpu {

const std::vector<std::string> kSmiQueryGpuFields = {
    "index",
    "name",
    "uuid",
    "pci.bus_id",
    "driver_version",
    "temperature.gpu",
    "power.draw",
    "power.limit",
    "clocks.sm",
    "clocks.max.sm",
    "clocks.mem",
    "clocks.max.mem",
    "utilization.gpu",
    "utilization.memory",
    "pstate",
    std::string(kSmiReasonsField),
    "memory.total",
    "memory.used",
    "memory.free",
};

const std::vector<std::string> kSmiQueryAppsFields = {"gpu_uuid", "pid", "process_name",
                                                      "used_memory"};

bool smi_is_unavailable(std::string_view cell) {
  cell = trim(cell);
  if (cell.empty()) return true;
  if (cell.front() == '[' && cell.back() == ']') return true;  // [N/A], [Not Supported], ...
  return cell == "N/A" || cell == "Not Supported" || cell == "Unknown Error" ||
         cell == "Insufficient Permissions" || cell == "Not Available";
}

std::optional<double> smi_number(std::string_view cell) {
  cell = trim(cell);
  if (smi_is_unavailable(cell)) return std::nullopt;
  const auto lead = parse_leading_double(cell);
  if (!lead) return std::nullopt;
  const std::string_view unit = trim(lead->rest);
  // Only a unit may follow: "W", "%", "MiB", "MHz", "C", "us".
  for (char c : unit) {
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '%')) return std::nullopt;
  }
  if (!std::isfinite(lead->value)) return std::nullopt;
  return lead->value;
}

const std::optional<std::string>* SmiCsvRow::find(std::string_view field) const {
  for (const auto& [name, value] : cells) {
    if (name == field) return &value;
  }
  return nullptr;
}

namespace {

// "memory.total [MiB]" -> "memory.total"
std::string_view strip_header_unit(std::string_view cell) {
  cell = trim(cell);
  if (const auto bracket = cell.find(" [");
      bracket != std::string_view::npos && cell.ends_with("]")) {
    cell = trim(cell.substr(0, bracket));
  }
  return cell;
}

bool is_field_name(std::string_view s) {
  if (s.empty() || s.front() < 'a' || s.front() > 'z') return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.')) return false;
  }
  return true;
}

bool known_field(std::string_view s) {
  for (const auto& f : kSmiQueryGpuFields) {
    if (f == s) return true;
  }
  for (const auto& f : kSmiQueryAppsFields) {
    if (f == s) return true;
  }
  // --query-compute-apps headers name some columns differently from the query:
  //   "pid, process_name, used_gpu_memory [MiB]"
  return s == "pid" || s == "timestamp" || s == kSmiReasonsFieldOld || s == "used_gpu_memory" ||
         s == "gpu_name" || s == "gpu_bus_id";
}

bool looks_like_header(const std::vector<std::string_view>& cells) {
  for (auto cell : cells) {
    const std::string_view name = strip_header_unit(cell);
    if (!is_field_name(name)) return false;
    if (!known_field(name) && name.find('.') == std::string_view::npos) return false;
  }
  return !cells.empty();
}

std::optional<std::uint32_t> as_u32(const std::optional<double>& v) {
  if (!v || *v < 0) return std::nullopt;
  return checked_round<std::uint32_t>(*v);
}

std::optional<std::uint64_t> scaled_u64(const std::optional<double>& v, double factor) {
  if (!v || *v < 0) return std::nullopt;
  return checked_round<std::uint64_t>(*v * factor);
}

std::optional<std::int64_t> millicelsius(const std::optional<double>& v) {
  if (!v) return std::nullopt;
  return checked_round<std::int64_t>(*v * 1000.0);
}

// "P0" .. "P15"
std::optional<std::uint32_t> parse_pstate(std::string_view cell) {
  cell = trim(cell);
  if (cell.size() < 2 || cell.front() != 'P') return std::nullopt;
  const auto n = parse_u64(cell.substr(1));
  if (!n || *n > 15) return std::nullopt;
  return static_cast<std::uint32_t>(*n);
}

}  // namespace

Result<std::vector<SmiCsvRow>> parse_smi_csv(std::string_view text,
                                             const std::vector<std::string>& fields) {
  std::vector<std::string> names = fields;
  std::vector<SmiCsvRow> rows;
  bool first = true;
  for (std::string_view line : split_lines(text)) {
    line = trim(line);
    if (line.empty()) continue;
    const auto cells = split(line, ',');
    if (first) {
      first = false;
      if (looks_like_header(cells)) {
        names.clear();
        for (auto c : cells) names.emplace_back(strip_header_unit(c));
        continue;
      }
    }
    if (cells.size() != names.size()) {
      return fail(Errc::malformed,
                  fmt::format("nvidia-smi csv: {} cells where {} fields were asked: {}",
                              cells.size(), names.size(), quote_for_message(line)));
    }
    SmiCsvRow row;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const std::string_view cell = trim(cells[i]);
      row.cells.emplace_back(names[i], smi_is_unavailable(cell)
                                           ? std::nullopt
                                           : std::optional<std::string>(std::string(cell)));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

Result<std::vector<SmiGpuRecord>> parse_smi_query_gpu(std::string_view text,
                                                      const std::vector<std::string>& fields) {
  // 0, NVIDIA GB10, [N/A], [N/A], [N/A]
  auto rows = parse_smi_csv(text, fields);
  if (!rows) return tl::unexpected(rows.error());
  std::vector<SmiGpuRecord> out;
  for (std::size_t r = 0; r < rows->size(); ++r) {
    const SmiCsvRow& row = (*rows)[r];
    SmiGpuRecord rec;
    rec.device.index = static_cast<unsigned>(r);
    std::optional<double> mem_total, mem_used, mem_free;
    for (const auto& [name, value] : row.cells) {
      if (!value) continue;
      const std::string& v = *value;
      const auto num = [&v] { return smi_number(v); };
      if (name == "index") {
        const auto idx = parse_u64(v);
        if (!idx || *idx > 1024) {
          return fail(Errc::malformed,
                      fmt::format("nvidia-smi csv: bad index {}", quote_for_message(v)));
        }
        rec.device.index = static_cast<unsigned>(*idx);
      } else if (name == "name") {
        rec.device.name = v;
      } else if (name == "uuid") {
        rec.device.uuid = v;
      } else if (name == "pci.bus_id") {
        rec.device.pci_bus_id = v;
      } else if (name == "driver_version") {
        rec.driver_version = v;
      } else if (name == "temperature.gpu") {
        rec.snapshot.temp_millicelsius = millicelsius(num());
      } else if (name == "temperature.gpu.tlimit") {
        rec.snapshot.margin_temp_millicelsius = millicelsius(num());
      } else if (name == "power.draw" || name == "power.draw.average" ||
                 name == "power.draw.instant") {
        if (!rec.snapshot.power_microwatts) rec.snapshot.power_microwatts = scaled_u64(num(), 1e6);
      } else if (name == "power.limit" || name == "enforced.power.limit") {
        rec.snapshot.power_limit_microwatts = scaled_u64(num(), 1e6);
      } else if (name == "clocks.sm" || name == "clocks.current.sm") {
        rec.snapshot.sm_clock_mhz = as_u32(num());
      } else if (name == "clocks.max.sm") {
        rec.snapshot.sm_clock_max_mhz = as_u32(num());
      } else if (name == "clocks.mem" || name == "clocks.current.memory") {
        rec.snapshot.mem_clock_mhz = as_u32(num());
      } else if (name == "clocks.max.mem" || name == "clocks.max.memory") {
        rec.snapshot.mem_clock_max_mhz = as_u32(num());
      } else if (name == "utilization.gpu") {
        rec.snapshot.util_gpu_percent = as_u32(num());
      } else if (name == "utilization.memory") {
        rec.snapshot.util_mem_percent = as_u32(num());
      } else if (name == "pstate") {
        rec.snapshot.pstate = parse_pstate(v);
      } else if (name == kSmiReasonsField || name == kSmiReasonsFieldOld) {
        rec.snapshot.clocks_event_reasons = parse_hex_u64(v);  // 0x0000000000000000
      } else if (name == "memory.total") {
        mem_total = num();
      } else if (name == "memory.used") {
        mem_used = num();
      } else if (name == "memory.free") {
        mem_free = num();
      }
    }
    if (mem_total && (mem_used || mem_free)) {
      const double used = mem_used ? *mem_used : *mem_total - *mem_free;
      const double free = mem_free ? *mem_free : *mem_total - *mem_used;
      const auto mib = static_cast<double>(kMiB);
      rec.snapshot.memory =
          GpuMemory{scaled_u64(mem_total, mib).value_or(0), scaled_u64(free, mib).value_or(0),
                    scaled_u64(used, mib).value_or(0)};
    }
    rec.snapshot.index = rec.device.index;
    out.push_back(std::move(rec));
  }
  return out;
}

Result<std::vector<SmiComputeApp>> parse_smi_compute_apps(std::string_view text,
                                                          const std::vector<std::string>& fields) {
  // GPU-..., 114687, /usr/local/bin/python, 19135
  auto rows = parse_smi_csv(text, fields);
  if (!rows) return tl::unexpected(rows.error());
  std::vector<SmiComputeApp> out;
  for (const SmiCsvRow& row : *rows) {
    SmiComputeApp app;
    bool has_pid = false;
    for (const auto& [name, value] : row.cells) {
      if (!value) continue;
      if (name == "gpu_uuid") {
        app.gpu_uuid = *value;
      } else if (name == "pid") {
        const auto pid = parse_u64(*value);
        if (!pid || *pid > std::numeric_limits<std::uint32_t>::max()) {
          return fail(Errc::malformed,
                      fmt::format("nvidia-smi csv: bad pid {}", quote_for_message(*value)));
        }
        app.process.pid = static_cast<std::uint32_t>(*pid);
        has_pid = true;
      } else if (name == "process_name") {
        app.process.name = *value;
      } else if (name == "used_memory" || name == "used_gpu_memory") {
        app.process.used_bytes = scaled_u64(smi_number(*value), static_cast<double>(kMiB));
      }
    }
    if (!has_pid) return fail(Errc::malformed, "nvidia-smi csv: compute app row without a pid");
    out.push_back(std::move(app));
  }
  return out;
}

}  // namespace sparkops::gpu
