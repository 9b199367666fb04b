#include "status/status_render.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "base/table.hpp"
#include "base/time_format.hpp"
#include "base/units.hpp"
#include "gpu/throttle_reasons.hpp"

namespace sparkops::status {

namespace {

std::string flush_warning(const StatusReport& r) {
  if (!r.pool || !r.pool->flush_suggested) return {};
  return fmt::format(
      "free now is {} below available: between runs, `sudo sparkops flush` (OOM ladder step 1)",
      format_bytes(r.pool->reclaimable_bytes));
}

std::string prochot_warning(const StatusReport& r) {
  if (!r.spbm || !r.spbm->prochot || *r.spbm->prochot == 0) return {};
  return "spbm reports PROCHOT asserted: the firmware is throttling";
}

}  // namespace

std::vector<std::string> status_warnings(const StatusReport& r) {
  std::vector<std::string> out;
  for (auto w : {flush_warning(r), prochot_warning(r)}) {
    if (!w.empty()) out.push_back(std::move(w));
  }
  return out;
}

namespace {

std::string celsius(std::int64_t millicelsius) {
  return fmt::format("{:.0f} C", static_cast<double>(millicelsius) / 1000.0);
}

std::string watts(std::uint64_t microwatts) {
  return fmt::format("{:.1f} W", static_cast<double>(microwatts) / 1e6);
}

void render_header(const StatusReport& r, std::string& out) {
  std::vector<std::string> parts;
  if (r.system.board_model) parts.push_back(*r.system.board_model);
  if (r.system.architecture) parts.push_back(*r.system.architecture);
  if (r.system.kernel_release) parts.push_back(*r.system.kernel_release);
  out += fmt::format("sparkops {} - {}{}  {}\n", r.sparkops_version,
                     r.system.hostname.value_or("unknown host"),
                     parts.empty() ? "" : fmt::format(" ({})", fmt::join(parts, ", ")),
                     format_iso8601_utc_ms(r.taken_at));
}

void render_pool(const StatusReport& r, std::string& out) {
  const bool discrete =
      r.training_budget && r.training_budget->source == host::BudgetSource::gpu_memory;
  out += discrete ? "\nPOOL  host memory, from /proc/meminfo (the GPU has its own: see GPU)\n"
                  : "\nPOOL  unified memory, from /proc/meminfo\n";
  if (!r.pool) {
    out += "  unavailable: /proc/meminfo could not be read (see notes)\n";
    return;
  }
  const host::PoolView& p = *r.pool;
  const auto row = [&](std::string_view label, std::uint64_t bytes, std::string_view why) {
    out += fmt::format("  {:<13}{:>11}   {}\n", label, format_bytes(bytes), why);
  };
  row("total", p.total_bytes, "MemTotal");
  row("free now", p.free_now_bytes, "MemFree: what CUDA can take without reclaim");
  row("available", p.available_bytes, "MemAvailable: the honest headroom");
  row("reclaimable", p.reclaimable_bytes, "page cache a flush gives back (available - free now)");
  if (p.hugepages_reserved_bytes > 0) {
    row("huge pages", p.hugepages_reserved_bytes, "reserved HugeTLB pool, outside available");
  }
  if (p.cgroup_headroom_bytes) {
    row("cgroup room", *p.cgroup_headroom_bytes,
        "memory.max - memory.current: lower than available");
  }
  row("budget", p.budget_bytes,
      fmt::format("{} - {} overhead: plan against this",
                  p.cgroup_headroom_bytes ? "cgroup room" : "available",
                  format_bytes(p.overhead_bytes)));
  if (const auto w = flush_warning(r); !w.empty()) out += fmt::format("  ! {}\n", w);
}

void render_gpu_device(const gpu::GpuDevice& d, const gpu::GpuSnapshot& s, std::string& out) {
  std::vector<std::string> line;
  if (s.temp_millicelsius) {
    std::string t = celsius(*s.temp_millicelsius);
    if (s.margin_temp_millicelsius)
      t += fmt::format(" (margin {})", celsius(*s.margin_temp_millicelsius));
    line.push_back("temp " + t);
  }
  if (s.power_microwatts) {
    std::string pw = "power " + watts(*s.power_microwatts);
    if (s.power_limit_microwatts) pw += " / " + watts(*s.power_limit_microwatts);
    line.push_back(pw);
  }
  if (s.pstate) line.push_back(fmt::format("P{}", *s.pstate));
  if (s.util_gpu_percent) line.push_back(fmt::format("util {}%", *s.util_gpu_percent));
  out += fmt::format("GPU {}  {}\n", d.index, d.name);
  out += fmt::format("  {}\n", line.empty() ? std::string("no readings")
                                            : fmt::format("{}", fmt::join(line, "   ")));
  if (s.sm_clock_mhz) {
    out += fmt::format("  SM clock {} MHz{}\n", *s.sm_clock_mhz,
                       s.sm_clock_max_mhz ? fmt::format(" of {} max", *s.sm_clock_max_mhz) : "");
  }
  if (s.clocks_event_reasons) {
    const std::uint64_t throttling = *s.clocks_event_reasons & gpu::kThrottlingReasonsMask;
    out += fmt::format("  throttle now: {}\n",
                       throttling ? gpu::reason_words_joined(throttling, ", ") : "none");
  }
  std::vector<std::string> totals;
  const auto add = [&](std::string_view name, const std::optional<std::chrono::nanoseconds>& v) {
    if (v && v->count() > 0) {
      totals.push_back(fmt::format("{} {}", gpu::reason_words(name), format_duration(*v)));
    }
  };
  add("sw_power_cap", s.counters.sw_power_cap);
  add("sw_thermal", s.counters.sw_thermal);
  add("hw_thermal", s.counters.hw_thermal);
  add("hw_power_brake", s.counters.hw_power_brake);
  add("sync_boost", s.counters.sync_boost);
  if (!totals.empty()) {
    out += fmt::format("  throttled since driver load: {}\n", fmt::join(totals, ", "));
  } else if (s.counters.sw_power_cap || s.counters.sw_thermal || s.counters.hw_thermal) {
    out += "  throttled since driver load: never\n";
  }
  std::string mem;
  if (s.memory) {
    mem = fmt::format("{} used of {}", format_bytes(s.memory->used_bytes),
                      format_bytes(s.memory->total_bytes));
  } else {
    mem = "unified (see pool; NVML reports it as not supported)";
  }
  if (s.processes) {
    std::uint64_t sum = 0;
    for (const auto& p : *s.processes) sum += p.used_bytes.value_or(0);
    mem += fmt::format("; {} compute process{} hold {}", s.processes->size(),
                       s.processes->size() == 1 ? "" : "es", format_bytes(sum));
  }
  out += fmt::format("  memory {}\n", mem);
}

void render_gpu(const StatusReport& r, std::string& out) {
  out += "\n";
  const GpuStatus& g = r.gpu;
  if (g.devices.empty()) {
    out += fmt::format("GPU   none: {}\n",
                       g.detail.empty() ? std::string(gpu::gpu_state_name(g.state)) : g.detail);
    return;
  }
  for (const auto& d : g.devices) {
    const gpu::GpuSnapshot* snap = nullptr;
    for (const auto& s : g.snapshots) {
      if (s.index == d.index) snap = &s;
    }
    if (snap == nullptr) {
      out += fmt::format("GPU {}  {}\n  no reading: {}\n", d.index, d.name,
                         g.detail.empty() ? std::string(gpu::gpu_state_name(g.state)) : g.detail);
      continue;
    }
    render_gpu_device(d, *snap, out);
  }
  if (r.training_budget && r.training_budget->device) {
    out += fmt::format(
        "  training budget {}: GPU {}'s free memory (a discrete GPU: a run lives in its memory, "
        "not in the host pool)\n",
        format_bytes(r.training_budget->bytes), r.training_budget->device->index);
  }
  out += fmt::format("  source {}{}\n", g.backend,
                     g.driver_version ? fmt::format(", driver {}", *g.driver_version) : "");
}

void render_thermals_and_pressure(const StatusReport& r, std::string& out) {
  out += "\n";
  if (r.hottest_sensor) {
    out += fmt::format(
        "THERMALS  hottest {} {}\n", r.hottest_sensor->name,
        fmt::format("{:.1f} C", static_cast<double>(r.hottest_sensor->temp_millicelsius) / 1000.0));
  } else {
    out += "THERMALS  no host temperature sensors readable\n";
  }
  if (!r.spbm_rails.empty()) {
    // The rails that explain a power ceiling; --json carries all of them.
    static constexpr std::string_view kShown[] = {"sys_total", "dc_input", "soc_pkg", "cpu_gpu",
                                                  "gpu"};
    std::vector<std::string> rails;
    for (const auto& rail : r.spbm_rails) {
      if (std::find(std::begin(kShown), std::end(kShown), rail.name) == std::end(kShown)) continue;
      rails.push_back(fmt::format("{} {}", rail.name, watts(rail.power_microwatts)));
    }
    out += fmt::format("  spbm rails: {}\n", fmt::join(rails, ", "));
  }
  if (const auto w = prochot_warning(r); !w.empty()) out += fmt::format("  ! {}\n", w);
  if (r.memory_pressure) {
    const host::Psi& p = *r.memory_pressure;
    out += fmt::format("PRESSURE  memory some {:.2f}% (10s) {:.2f}% (60s)", p.some.avg10,
                       p.some.avg60);
    if (p.full) out += fmt::format(", full {:.2f}% (10s)", p.full->avg10);
    out += "\n";
  } else {
    out += "PRESSURE  PSI not available on this kernel\n";
  }
}

void render_workloads(const StatusReport& r, std::optional<std::size_t> width, std::string& out) {
  if (!r.workloads) return;
  out += "\nWORKLOADS";
  if (r.workloads->empty()) {
    out += "  no inference servers or trainers running\n";
  } else {
    out += "\n";
    Table table({{"PID", Align::right},
                 {"KIND"},
                 {"NAME", Align::left, 0, true, 15},
                 {"CLAIM", Align::right},
                 {"ACTUAL", Align::right},
                 {"HEAVY", Align::left, 1}},
                "  ");
    for (const auto& w : *r.workloads) {
      table.add_row({std::to_string(w.pid), w.kind, w.name,
                     w.claim_bytes ? format_bytes(*w.claim_bytes) : "uncapped",
                     w.actual_bytes ? format_bytes(*w.actual_bytes) : "-",
                     w.heavy ? (w.orphan ? "yes (orphan)" : "yes") : "no"});
    }
    out += table.render(width);
    if (width && !table.left_out().empty()) {
      out += "  " + left_out_note(table.left_out(), *width) + "\n";
    }
  }
  if (!r.coexistence.empty()) out += fmt::format("  {}\n", r.coexistence);
}

}  // namespace

std::string render_status(const StatusReport& r, std::optional<std::size_t> width) {
  std::string out;
  render_header(r, out);
  render_pool(r, out);
  render_gpu(r, out);
  render_thermals_and_pressure(r, out);
  render_workloads(r, width, out);
  if (!r.notes.empty()) {
    out += "\nNOTES\n";
    for (const auto& n : r.notes) out += fmt::format("  {}\n", n);
  }
  return out;
}

}  // namespace sparkops::status
