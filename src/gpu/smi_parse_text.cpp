// Parsers of nvidia-smi's human-readable outputs: the default table and `nvidia-smi -q`.

#include <cmath>

#include <fmt/format.h>

#include "base/checked_cast.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "gpu/smi_parse.hpp"
#include "gpu/throttle_reasons.hpp"

namespace sparkops::gpu {

namespace {

std::optional<std::int64_t> to_millicelsius(std::optional<double> v) {
  if (!v) return std::nullopt;
  return checked_round<std::int64_t>(*v * 1000.0);
}

std::optional<std::uint64_t> to_scaled(std::optional<double> v, double factor) {
  if (!v || *v < 0) return std::nullopt;
  return checked_round<std::uint64_t>(*v * factor);
}

std::optional<std::uint32_t> to_u32(std::optional<double> v) {
  if (!v || *v < 0) return std::nullopt;
  return checked_round<std::uint32_t>(*v);
}

std::optional<std::uint32_t> pstate_of(std::string_view s) {
  s = trim(s);
  if (s.size() < 2 || s.front() != 'P') return std::nullopt;
  const auto n = parse_u64(s.substr(1));
  if (!n || *n > 15) return std::nullopt;
  return static_cast<std::uint32_t>(*n);
}

// "Driver Version: 580.126.09" -> "580.126.09"
std::optional<std::string> value_after(std::string_view line, std::string_view label) {
  const auto at = line.find(label);
  if (at == std::string_view::npos) return std::nullopt;
  const auto tokens = split_ws(line.substr(at + label.size()));
  if (tokens.empty()) return std::nullopt;
  return std::string(tokens.front());
}

// Cells between '|' separators, trimmed: "| a | b |" -> {"a", "b"}.
std::vector<std::string_view> table_cells(std::string_view line) {
  std::vector<std::string_view> out;
  line = trim(line);
  if (!line.starts_with('|') || !line.ends_with('|') || line.size() < 2) return out;
  for (auto cell : split(line.substr(1, line.size() - 2), '|')) out.push_back(trim(cell));
  return out;
}

bool is_process_type(std::string_view t) {
  return t == "C" || t == "G" || t == "C+G" || t == "M" || t == "M+C";
}

// |    0   N/A  N/A            4174      G   /usr/lib/xorg/Xorg                       84MiB |
std::optional<SmiTableProcess> parse_process_row(std::string_view cell) {
  const auto tokens = split_ws(cell);
  if (tokens.size() < 4) return std::nullopt;
  const auto gpu = parse_u64(tokens[0]);
  if (!gpu) return std::nullopt;
  std::size_t type_at = 0;
  for (std::size_t i = 2; i < tokens.size(); ++i) {
    if (is_process_type(tokens[i])) {
      type_at = i;
      break;
    }
  }
  if (type_at == 0 || type_at + 1 >= tokens.size()) return std::nullopt;
  const auto pid = parse_u64(tokens[type_at - 1]);
  if (!pid || *pid > 0xFFFFFFFFULL) return std::nullopt;
  SmiTableProcess p;
  p.gpu_index = static_cast<unsigned>(*gpu);
  p.pid = static_cast<std::uint32_t>(*pid);
  p.type = std::string(tokens[type_at]);
  const std::string_view last = tokens.back();
  const bool last_is_memory = last.ends_with("MiB") || last == "N/A";
  const std::size_t name_end = last_is_memory ? tokens.size() - 1 : tokens.size();
  for (std::size_t i = type_at + 1; i < name_end; ++i) {
    if (!p.name.empty()) p.name += ' ';
    p.name += tokens[i];
  }
  if (last_is_memory) p.used_bytes = to_scaled(smi_number(last), static_cast<double>(kMiB));
  return p;
}

// The second line of a GPU block: "| N/A   36C    P8              3W /  N/A  | Not Supported |
// 0%      Default |"
void parse_gpu_second_line(const std::vector<std::string_view>& cells, SmiGpuRecord& rec) {
  GpuSnapshot& s = rec.snapshot;
  const std::string_view first = cells[0];
  for (auto tok : split_ws(first)) {
    if (tok.size() >= 2 && tok.back() == 'C' && !s.temp_millicelsius) {
      if (auto t = parse_double(tok.substr(0, tok.size() - 1)))
        s.temp_millicelsius = to_millicelsius(t);
    } else if (auto p = pstate_of(tok); p && !s.pstate) {
      s.pstate = p;
    }
  }
  // " / " separates usage from cap; the fan's "N/A" has a bare '/'.
  if (const auto slash = first.find(" / "); slash != std::string_view::npos) {
    const auto left = split_ws(first.substr(0, slash));
    const auto right = split_ws(first.substr(slash + 3));
    if (!left.empty() && left.back().ends_with('W')) {
      s.power_microwatts = to_scaled(smi_number(left.back()), 1e6);
    }
    if (!right.empty()) s.power_limit_microwatts = to_scaled(smi_number(right.front()), 1e6);
  }
  if (cells.size() > 1) {
    // "633MiB / 143771MiB" or "Not Supported"
    const std::string_view mem = cells[1];
    if (const auto slash = mem.find('/'); slash != std::string_view::npos) {
      const auto used = smi_number(mem.substr(0, slash));
      const auto total = smi_number(mem.substr(slash + 1));
      if (used && total && *total >= *used) {
        const auto mib = static_cast<double>(kMiB);
        s.memory =
            GpuMemory{to_scaled(total, mib).value_or(0), to_scaled(*total - *used, mib).value_or(0),
                      to_scaled(used, mib).value_or(0)};
      }
    }
  }
  if (cells.size() > 2) {
    const auto tokens = split_ws(cells[2]);
    if (!tokens.empty()) s.util_gpu_percent = to_u32(smi_number(tokens.front()));
  }
}

}  // namespace

Result<SmiTable> parse_smi_table(std::string_view text) {
  SmiTable table;
  const auto lines = split_lines(text);
  bool in_processes = false;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    if (contains(line, "Driver Version:")) {
      table.driver_version = value_after(line, "Driver Version:");
      table.cuda_version = value_after(line, "CUDA Version:");
      continue;
    }
    if (contains(line, "Processes:")) {
      in_processes = true;
      continue;
    }
    const auto cells = table_cells(line);
    if (in_processes) {
      if (cells.size() == 1) {
        if (auto p = parse_process_row(cells[0])) table.processes.push_back(std::move(*p));
      }
      continue;
    }
    // |   0  NVIDIA GB10                    On  |   0000000F:01:00.0 Off |                  N/A |
    if (cells.size() < 3) continue;
    const auto tokens = split_ws(cells[0]);
    const auto bus = split_ws(cells[1]);
    if (tokens.size() < 2 || bus.empty() || !contains(bus[0], ":")) continue;
    const auto index = parse_u64(tokens[0]);
    if (!index || *index > 1024) continue;
    SmiGpuRecord rec;
    rec.device.index = static_cast<unsigned>(*index);
    rec.snapshot.index = rec.device.index;
    rec.device.pci_bus_id = std::string(bus[0]);
    // The name runs up to the persistence-mode column ("On"/"Off") when present.
    std::size_t name_end = tokens.size();
    if (tokens.back() == "On" || tokens.back() == "Off") --name_end;
    for (std::size_t t = 1; t < name_end; ++t) {
      if (!rec.device.name.empty()) rec.device.name += ' ';
      rec.device.name += tokens[t];
    }
    rec.driver_version = table.driver_version;
    if (i + 1 < lines.size()) {
      const auto next = table_cells(lines[i + 1]);
      if (next.size() >= 3) {
        parse_gpu_second_line(next, rec);
        ++i;
      }
    }
    table.gpus.push_back(std::move(rec));
  }
  if (table.gpus.empty()) return fail(Errc::malformed, "nvidia-smi table: no GPU block found");
  return table;
}

namespace {

struct QSection {
  std::size_t indent;
  std::string name;
};

std::uint64_t reason_bit(std::string_view key) {
  if (key == "Idle") return kReasonGpuIdle;
  if (key == "Applications Clocks Setting") return kReasonApplicationsClocks;
  if (key == "SW Power Cap") return kReasonSwPowerCap;
  if (key == "HW Slowdown") return kReasonHwSlowdown;
  if (key == "HW Thermal Slowdown") return kReasonHwThermal;
  if (key == "HW Power Brake Slowdown") return kReasonHwPowerBrake;
  if (key == "Sync Boost") return kReasonSyncBoost;
  if (key == "SW Thermal Slowdown") return kReasonSwThermal;
  if (key == "Display Clock Setting") return kReasonDisplayClock;
  return 0;
}

std::optional<std::chrono::nanoseconds> micros(std::string_view v) {
  const auto n = smi_number(v);  // "903158 us"
  if (!n || *n < 0) return std::nullopt;
  const auto ns = checked_round<std::int64_t>(*n * 1000.0);
  if (!ns) return std::nullopt;
  return std::chrono::nanoseconds(*ns);
}

// What one GPU section accumulates before it becomes figures.
struct QScratch {
  std::uint64_t reasons = 0;
  bool reasons_seen = false;
  std::optional<double> fb_total, fb_used, fb_free;
};

// Applies one "Key : Value" line of section `section` to `gpu`; false when the pair is unknown.
bool apply_q_value(std::string_view section, std::string_view key, std::string_view value,
                   SmiQueryGpu& gpu, QScratch& scratch) {
  GpuSnapshot& s = gpu.record.snapshot;
  if (section == "Clocks Event Reasons" || section == "Clocks Throttle Reasons" ||
      section == "Clocks Throttle Reasons Active") {
    const std::uint64_t bit = reason_bit(key);
    if (bit == 0 || (value != "Active" && value != "Not Active")) return false;
    scratch.reasons_seen = true;
    if (value == "Active") scratch.reasons |= bit;
    return true;
  }
  if (section == "Clocks Event Reasons Counters" || section == "Clocks Throttle Reasons Counters") {
    ThrottleCounters& c = s.counters;
    if (key == "SW Power Capping")
      c.sw_power_cap = micros(value);
    else if (key == "Sync Boost")
      c.sync_boost = micros(value);
    else if (key == "SW Thermal Slowdown")
      c.sw_thermal = micros(value);
    else if (key == "HW Thermal Slowdown")
      c.hw_thermal = micros(value);
    else if (key == "HW Power Braking")
      c.hw_power_brake = micros(value);
    else
      return false;
    return true;
  }
  if (section == "Temperature") {
    if (key == "GPU Current Temp")
      s.temp_millicelsius = to_millicelsius(smi_number(value));
    else if (key == "GPU T.Limit Temp")
      s.margin_temp_millicelsius = to_millicelsius(smi_number(value));
    else if (key == "GPU Shutdown T.Limit Temp")
      gpu.shutdown_margin_millicelsius = to_millicelsius(smi_number(value));
    else if (key == "GPU Slowdown T.Limit Temp")
      gpu.slowdown_margin_millicelsius = to_millicelsius(smi_number(value));
    else
      return false;
    return true;
  }
  if (section == "FB Memory Usage") {
    if (key == "Total") {
      gpu.fb_memory_na = !smi_number(value).has_value();
      scratch.fb_total = smi_number(value);
    } else if (key == "Used") {
      scratch.fb_used = smi_number(value);
    } else if (key == "Free") {
      scratch.fb_free = smi_number(value);
    } else {
      return key == "Reserved";
    }
    return true;
  }
  if (section == "GPU Power Readings" || section == "Power Readings") {
    if (key == "Power Draw" || key == "Average Power Draw") {
      s.power_microwatts = to_scaled(smi_number(value), 1e6);
    } else if (key == "Enforced Power Limit" || key == "Current Power Limit") {
      if (!s.power_limit_microwatts) s.power_limit_microwatts = to_scaled(smi_number(value), 1e6);
    } else {
      return false;
    }
    return true;
  }
  if (section == "Clocks" || section == "Max Clocks") {
    const bool max = section == "Max Clocks";
    if (key == "SM")
      (max ? s.sm_clock_max_mhz : s.sm_clock_mhz) = to_u32(smi_number(value));
    else if (key == "Memory")
      (max ? s.mem_clock_max_mhz : s.mem_clock_mhz) = to_u32(smi_number(value));
    else
      return false;
    return true;
  }
  if (section == "Utilization") {
    if (key == "Gpu" || key == "GPU")
      s.util_gpu_percent = to_u32(smi_number(value));
    else if (key == "Memory")
      s.util_mem_percent = to_u32(smi_number(value));
    else
      return false;
    return true;
  }
  if (section.empty()) {
    if (key == "Performance State")
      s.pstate = pstate_of(value);
    else if (key == "Product Name")
      gpu.record.device.name = std::string(value);
    else if (key == "GPU UUID")
      gpu.record.device.uuid = std::string(value);
    else
      return false;
    return true;
  }
  return false;
}

}  // namespace

Result<SmiQuery> parse_smi_q(std::string_view text) {
  // "        SW Thermal Slowdown               : 903158 us"
  SmiQuery q;
  std::vector<QSection> stack;
  SmiQueryGpu* gpu = nullptr;
  QScratch scratch;
  std::size_t recognised = 0;
  const auto finish_gpu = [&] {
    if (gpu) {
      GpuSnapshot& s = gpu->record.snapshot;
      if (scratch.reasons_seen) s.clocks_event_reasons = scratch.reasons;
      if (scratch.fb_total && scratch.fb_used && scratch.fb_free) {
        const auto mib = static_cast<double>(kMiB);
        s.memory = GpuMemory{to_scaled(scratch.fb_total, mib).value_or(0),
                             to_scaled(scratch.fb_free, mib).value_or(0),
                             to_scaled(scratch.fb_used, mib).value_or(0)};
      }
    }
    scratch = QScratch{};
  };
  const auto new_gpu = [&](std::string bus_id) {
    finish_gpu();
    SmiQueryGpu g;
    g.record.device.index = static_cast<unsigned>(q.gpus.size());
    g.record.snapshot.index = g.record.device.index;
    g.record.device.pci_bus_id = std::move(bus_id);
    q.gpus.push_back(std::move(g));
    gpu = &q.gpus.back();
    stack.clear();
  };
  for (std::string_view raw : split_lines(text)) {
    const std::string_view line = trim(raw);
    if (line.empty() || line.starts_with("==") || line.starts_with("[")) continue;
    const std::size_t indent = raw.find_first_not_of(" \t");
    const auto colon = line.find(" :");
    if (colon == std::string_view::npos) {
      if (indent == 0 && line.starts_with("GPU ") && contains(line, ":")) {
        new_gpu(std::string(trim(line.substr(4))));
        ++recognised;
        continue;
      }
      while (!stack.empty() && stack.back().indent >= indent) stack.pop_back();
      stack.push_back({indent, std::string(line)});
      continue;
    }
    while (!stack.empty() && stack.back().indent >= indent) stack.pop_back();
    const std::string_view key = trim(line.substr(0, colon));
    const std::string_view value = trim(line.substr(colon + 2));
    if (!gpu) {
      if (key == "Driver Version") {
        q.driver_version = std::string(value);
        ++recognised;
        continue;
      }
      if (key == "CUDA Version") {
        q.cuda_version = std::string(value);
        ++recognised;
        continue;
      }
      if (key == "Timestamp" || key == "Attached GPUs") {
        ++recognised;
        continue;
      }
      if (stack.empty()) continue;
      auto sections = stack;
      new_gpu("");  // a section quoted without its "GPU <bus id>" header
      stack = std::move(sections);
    }
    const std::string section = stack.empty() ? std::string() : stack.back().name;
    if (apply_q_value(section, key, value, *gpu, scratch)) ++recognised;
  }
  finish_gpu();
  for (auto& g : q.gpus) g.record.driver_version = q.driver_version;
  if (recognised == 0) return fail(Errc::malformed, "nvidia-smi -q: no known key found");
  return q;
}

}  // namespace sparkops::gpu
