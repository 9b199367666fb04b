#include "exporter/metrics_builder.hpp"

#include <algorithm>
#include <chrono>
#include <map>

#include "gpu/throttle_reasons.hpp"

namespace sparkops::exporter {

namespace {

// Collects samples per family name, then emits them in catalogue order.
class FamilySet {
 public:
  void add(std::string_view name, std::vector<Label> labels, double value) {
    samples_[std::string(name)].push_back(MetricSample{std::move(labels), value});
  }
  // `divisor` converts to the base unit by division (exact for decimal unit prefixes: 97450000 uW
  // / 1e6 is the double nearest 97.45, where * 1e-6 is not); `multiplier` for MHz -> Hz.
  template <class T>
  void add_opt(std::string_view name, std::vector<Label> labels, const std::optional<T>& value,
               double divisor = 1.0, double multiplier = 1.0) {
    if (value) add(name, std::move(labels), static_cast<double>(*value) / divisor * multiplier);
  }

  std::vector<MetricFamily> finish() {
    std::vector<MetricFamily> out;
    for (const auto& def : metric_catalogue()) {
      auto it = samples_.find(std::string(def.name));
      if (it == samples_.end() || it->second.empty()) continue;
      out.push_back(MetricFamily{std::string(def.name), def.type, std::string(def.help),
                                 std::move(it->second)});
    }
    return out;
  }

 private:
  std::map<std::string, std::vector<MetricSample>, std::less<>> samples_;
};

constexpr double kMilli = 1e3;    // divisor: milli-units -> units
constexpr double kMicro = 1e6;    // divisor: micro-units -> units
constexpr double kPercent = 1e2;  // divisor: percent -> ratio
constexpr double kMega = 1e6;     // multiplier: MHz -> Hz

void add_pool(FamilySet& f, const status::StatusReport& r) {
  if (r.pool) {
    const auto& p = *r.pool;
    f.add("sparkops_pool_total_bytes", {}, static_cast<double>(p.total_bytes));
    f.add("sparkops_pool_free_bytes", {}, static_cast<double>(p.free_now_bytes));
    f.add("sparkops_pool_available_bytes", {}, static_cast<double>(p.available_bytes));
    f.add("sparkops_pool_reclaimable_bytes", {}, static_cast<double>(p.reclaimable_bytes));
    f.add("sparkops_pool_effective_available_bytes", {},
          static_cast<double>(p.effective_available_bytes));
    f.add("sparkops_pool_hugepages_reserved_bytes", {},
          static_cast<double>(p.hugepages_reserved_bytes));
    f.add("sparkops_pool_overhead_bytes", {}, static_cast<double>(p.overhead_bytes));
    f.add("sparkops_pool_budget_bytes", {}, static_cast<double>(p.budget_bytes));
    f.add("sparkops_pool_flush_suggested", {}, p.flush_suggested ? 1.0 : 0.0);
  }
  if (r.coexistence_verdict) {
    f.add("sparkops_pool_oversubscribed_bytes", {},
          static_cast<double>(r.coexistence_verdict->oversubscribed_bytes));
  }
  if (r.cgroup) {
    f.add_opt("sparkops_cgroup_memory_max_bytes", {}, r.cgroup->max_bytes);
    f.add_opt("sparkops_cgroup_memory_high_bytes", {}, r.cgroup->high_bytes);
    f.add_opt("sparkops_cgroup_memory_current_bytes", {}, r.cgroup->current_bytes);
  }
  if (r.memory_pressure) {
    const auto& m = *r.memory_pressure;
    const auto add_line = [&f](std::string scope, const host::PsiLine& line) {
      f.add("sparkops_memory_pressure_avg10_ratio", {{"scope", scope}}, line.avg10 / kPercent);
      f.add("sparkops_memory_pressure_avg60_ratio", {{"scope", scope}}, line.avg60 / kPercent);
      f.add("sparkops_memory_pressure_stall_seconds_total", {{"scope", scope}},
            static_cast<double>(line.total_us) / kMicro);
    };
    add_line("some", m.some);
    if (m.full) add_line("full", *m.full);
  }
  if (r.vmstat) {
    const auto& v = *r.vmstat;
    f.add_opt("sparkops_memory_major_faults_total", {}, v.pgmajfault);
    f.add_opt("sparkops_memory_refaults_total", {}, v.workingset_refault_total());
    f.add_opt("sparkops_memory_swapin_pages_total", {}, v.pswpin);
    f.add_opt("sparkops_oom_kills_total", {}, v.oom_kill);
  }
}

void add_host_sensors(FamilySet& f, const status::StatusReport& r) {
  if (r.hottest_sensor) {
    f.add("sparkops_host_hottest_sensor_celsius", {{"sensor", r.hottest_sensor->name}},
          static_cast<double>(r.hottest_sensor->temp_millicelsius) / kMilli);
  }
  for (const auto& rail : r.spbm_rails) {
    f.add("sparkops_spbm_rail_power_watts", {{"rail", rail.name}},
          static_cast<double>(rail.power_microwatts) / kMicro);
  }
  if (r.spbm) f.add_opt("sparkops_spbm_prochot", {}, r.spbm->prochot);
}

void add_reasons(FamilySet& f, const std::string& gpu, std::uint64_t mask) {
  f.add("sparkops_gpu_clocks_event_reasons", {{"gpu", gpu}}, static_cast<double>(mask));
  for (int bit = 0; bit < 9; ++bit) {
    const std::uint64_t b = 1ULL << bit;
    f.add("sparkops_gpu_clocks_event_reason_active",
          {{"gpu", gpu}, {"reason", gpu::reason_names(b).front()}}, (mask & b) ? 1.0 : 0.0);
  }
}

void add_counters(FamilySet& f, const std::string& gpu, const gpu::ThrottleCounters& c) {
  const std::pair<std::string_view, const std::optional<std::chrono::nanoseconds>*> counters[] = {
      {"sw_power_cap", &c.sw_power_cap},     {"sync_boost", &c.sync_boost},
      {"sw_thermal", &c.sw_thermal},         {"hw_thermal", &c.hw_thermal},
      {"hw_power_brake", &c.hw_power_brake},
  };
  for (const auto& [reason, value] : counters) {
    if (*value) {
      f.add("sparkops_gpu_throttle_seconds_total", {{"gpu", gpu}, {"reason", std::string(reason)}},
            std::chrono::duration<double>(**value).count());
    }
  }
}

void add_gpu(FamilySet& f, const status::GpuStatus& g) {
  f.add("sparkops_gpu_source_info",
        {{"backend", g.backend}, {"state", std::string(gpu::gpu_state_name(g.state))}}, 1.0);
  f.add("sparkops_gpu_hung", {{"backend", g.backend}}, g.state == gpu::GpuState::hung ? 1.0 : 0.0);
  for (const auto& d : g.devices) {
    f.add("sparkops_gpu_info",
          {{"gpu", std::to_string(d.index)},
           {"name", d.name},
           {"uuid", d.uuid},
           {"pci_bus_id", d.pci_bus_id}},
          1.0);
  }
  for (const auto& s : g.snapshots) {
    const std::string gpu = std::to_string(s.index);
    const auto L = [&gpu] { return std::vector<Label>{{"gpu", gpu}}; };
    f.add_opt("sparkops_gpu_temperature_celsius", L(), s.temp_millicelsius, kMilli);
    f.add_opt("sparkops_gpu_temperature_margin_celsius", L(), s.margin_temp_millicelsius, kMilli);
    f.add_opt("sparkops_gpu_power_watts", L(), s.power_microwatts, kMicro);
    f.add_opt("sparkops_gpu_power_limit_watts", L(), s.power_limit_microwatts, kMicro);
    f.add_opt("sparkops_gpu_energy_joules_total", L(), s.energy_microjoules, kMicro);
    f.add_opt("sparkops_gpu_sm_clock_hertz", L(), s.sm_clock_mhz, 1.0, kMega);
    f.add_opt("sparkops_gpu_sm_clock_max_hertz", L(), s.sm_clock_max_mhz, 1.0, kMega);
    f.add_opt("sparkops_gpu_memory_clock_hertz", L(), s.mem_clock_mhz, 1.0, kMega);
    f.add_opt("sparkops_gpu_memory_clock_max_hertz", L(), s.mem_clock_max_mhz, 1.0, kMega);
    f.add_opt("sparkops_gpu_utilization_ratio", L(), s.util_gpu_percent, kPercent);
    f.add_opt("sparkops_gpu_memory_utilization_ratio", L(), s.util_mem_percent, kPercent);
    f.add_opt("sparkops_gpu_pstate", L(), s.pstate);
    if (s.clocks_event_reasons) add_reasons(f, gpu, *s.clocks_event_reasons);
    add_counters(f, gpu, s.counters);
    if (s.memory) {
      f.add("sparkops_gpu_memory_total_bytes", L(), static_cast<double>(s.memory->total_bytes));
      f.add("sparkops_gpu_memory_used_bytes", L(), static_cast<double>(s.memory->used_bytes));
    }
  }
  f.add_opt("sparkops_gpu_process_memory_bytes", {}, g.process_memory_bytes);
}

void add_workloads(FamilySet& f, const std::vector<status::WorkloadLine>& workloads,
                   std::size_t cap) {
  std::map<std::string, std::size_t> per_kind;
  for (const auto& w : workloads) ++per_kind[w.kind];
  for (const auto& [kind, n] : per_kind) {
    f.add("sparkops_workloads", {{"kind", kind}}, static_cast<double>(n));
  }
  // Largest first (absent actual last), then by pid, so the cap keeps the series that matter.
  std::vector<const status::WorkloadLine*> order;
  for (const auto& w : workloads) order.push_back(&w);
  std::sort(order.begin(), order.end(),
            [](const status::WorkloadLine* a, const status::WorkloadLine* b) {
              const auto av = a->actual_bytes.value_or(0), bv = b->actual_bytes.value_or(0);
              if (a->actual_bytes.has_value() != b->actual_bytes.has_value())
                return a->actual_bytes.has_value();
              if (av != bv) return av > bv;
              return a->pid < b->pid;
            });
  const std::size_t exported = std::min(cap, order.size());
  f.add("sparkops_workloads_unexported", {}, static_cast<double>(order.size() - exported));
  std::sort(
      order.begin(), order.begin() + static_cast<std::ptrdiff_t>(exported),
      [](const status::WorkloadLine* a, const status::WorkloadLine* b) { return a->pid < b->pid; });
  for (std::size_t i = 0; i < exported; ++i) {
    const auto& w = *order[i];
    const auto L = [&w] {
      return std::vector<Label>{{"kind", w.kind}, {"pid", std::to_string(w.pid)}, {"name", w.name}};
    };
    f.add_opt("sparkops_workload_claim_bytes", L(), w.claim_bytes);
    f.add_opt("sparkops_workload_actual_bytes", L(), w.actual_bytes);
    f.add("sparkops_workload_heavy", L(), w.heavy ? 1.0 : 0.0);
    f.add("sparkops_workload_orphan", L(), w.orphan ? 1.0 : 0.0);
  }
}

void add_events(FamilySet& f, const EventTotals& e) {
  const auto add_list = [&f](std::string_view name,
                             const std::optional<std::vector<EventCount>>& list) {
    if (!list) return;
    for (const auto& c : *list) {
      f.add(name, {{"gpu", std::to_string(c.gpu)}, {"reason", c.reason}},
            static_cast<double>(c.count));
    }
  };
  add_list("sparkops_throttle_events_total", e.throttle);
  add_list("sparkops_slowdown_events_total", e.slowdown);
  f.add_opt("sparkops_contention_events_total", {}, e.contention);
  f.add("sparkops_gpu_hang_events_total", {}, static_cast<double>(e.gpu_hangs));
}

}  // namespace

std::vector<MetricFamily> build_metric_families(const status::StatusReport& report,
                                                const EventTotals& events,
                                                const MetricsOptions& options) {
  FamilySet f;
  const auto& sys = report.system;
  f.add("sparkops_info",
        {{"version", report.sparkops_version},
         {"hostname", sys.hostname.value_or("")},
         {"kernel", sys.kernel_release.value_or("")},
         {"arch", sys.architecture.value_or("")},
         {"os", sys.os_pretty_name.value_or("")},
         {"model", sys.board_model.value_or("")},
         {"gpu_backend", report.gpu.backend},
         {"gpu_driver", report.gpu.driver_version.value_or("")}},
        1.0);
  f.add("sparkops_collect_timestamp_seconds", {},
        std::chrono::duration<double>(report.taken_at.time_since_epoch()).count());
  f.add_opt("sparkops_collect_duration_seconds", {}, options.collect_duration_seconds);
  f.add_opt("sparkops_collect_interval_seconds", {}, options.collect_interval_seconds);
  add_pool(f, report);
  add_host_sensors(f, report);
  f.add_opt("sparkops_platform_power_ceiling_watts", {}, options.platform_ceiling_watts);
  add_gpu(f, report.gpu);
  if (report.workloads) add_workloads(f, *report.workloads, options.max_workload_series);
  add_events(f, events);
  auto families = f.finish();
  if (options.dcgm_compat == DcgmCompat::on) {
    for (auto& family : dcgm_metric_families(report)) families.push_back(std::move(family));
  }
  return families;
}

std::string render_metrics(const status::StatusReport& report, const EventTotals& events,
                           const MetricsOptions& options) {
  return render_exposition(build_metric_families(report, events, options));
}

}  // namespace sparkops::exporter
