#include "status/status_json.hpp"

#include "base/json_text.hpp"
#include "base/time_format.hpp"
#include "gpu/throttle_reasons.hpp"
#include "status/status_render.hpp"

namespace sparkops::status {

namespace {

using Json = nlohmann::ordered_json;

Json opt_celsius(const std::optional<std::int64_t>& millicelsius) {
  return millicelsius ? Json(static_cast<double>(*millicelsius) / 1000.0) : Json(nullptr);
}

Json opt_watts(const std::optional<std::uint64_t>& microwatts) {
  return microwatts ? Json(static_cast<double>(*microwatts) / 1e6) : Json(nullptr);
}

Json opt_seconds(const std::optional<std::chrono::nanoseconds>& ns) {
  return ns ? Json(std::chrono::duration<double>(*ns).count()) : Json(nullptr);
}

Json pool_json(const StatusReport& r) {
  if (!r.pool) return nullptr;
  const host::PoolView& p = *r.pool;
  Json j;
  j["total_bytes"] = p.total_bytes;
  j["free_now_bytes"] = p.free_now_bytes;
  j["available_bytes"] = p.available_bytes;
  j["reclaimable_bytes"] = p.reclaimable_bytes;
  j["hugepages_reserved_bytes"] = p.hugepages_reserved_bytes;
  j["cgroup_headroom_bytes"] = json_or_null<Json>(p.cgroup_headroom_bytes);
  j["effective_available_bytes"] = p.effective_available_bytes;
  j["overhead_bytes"] = p.overhead_bytes;
  j["budget_bytes"] = p.budget_bytes;
  j["flush_suggested"] = p.flush_suggested;
  j["cached_bytes"] = r.meminfo ? json_or_null<Json>(r.meminfo->cached_bytes) : Json(nullptr);
  j["swap_free_bytes"] = r.meminfo ? json_or_null<Json>(r.meminfo->swap_free_bytes) : Json(nullptr);
  return j;
}

Json cgroup_json(const std::optional<host::CgroupMemory>& cg) {
  if (!cg) return nullptr;
  return Json{{"path", cg->path},
              {"max_bytes", json_or_null<Json>(cg->max_bytes)},
              {"high_bytes", json_or_null<Json>(cg->high_bytes)},
              {"current_bytes", json_or_null<Json>(cg->current_bytes)}};
}

Json psi_line_json(const host::PsiLine& l) {
  return Json{
      {"avg10", l.avg10}, {"avg60", l.avg60}, {"avg300", l.avg300}, {"total_us", l.total_us}};
}

Json pressure_json(const std::optional<host::Psi>& psi) {
  if (!psi) return nullptr;
  return Json{{"some", psi_line_json(psi->some)},
              {"full", psi->full ? psi_line_json(*psi->full) : Json(nullptr)}};
}

Json counters_json(const gpu::ThrottleCounters& c) {
  return Json{{"sw_power_cap_seconds", opt_seconds(c.sw_power_cap)},
              {"sync_boost_seconds", opt_seconds(c.sync_boost)},
              {"sw_thermal_seconds", opt_seconds(c.sw_thermal)},
              {"hw_thermal_seconds", opt_seconds(c.hw_thermal)},
              {"hw_power_brake_seconds", opt_seconds(c.hw_power_brake)}};
}

Json device_json(const gpu::GpuDevice& d, const gpu::GpuSnapshot* s) {
  Json j{{"index", d.index}, {"name", d.name}, {"uuid", d.uuid}, {"pci_bus_id", d.pci_bus_id}};
  if (s == nullptr) return j;
  j["temperature_celsius"] = opt_celsius(s->temp_millicelsius);
  j["margin_celsius"] = opt_celsius(s->margin_temp_millicelsius);
  j["power_watts"] = opt_watts(s->power_microwatts);
  j["power_limit_watts"] = opt_watts(s->power_limit_microwatts);
  j["energy_joules"] = s->energy_microjoules
                           ? Json(static_cast<double>(*s->energy_microjoules) / 1e6)
                           : Json(nullptr);
  j["sm_clock_mhz"] = json_or_null<Json>(s->sm_clock_mhz);
  j["sm_clock_max_mhz"] = json_or_null<Json>(s->sm_clock_max_mhz);
  j["mem_clock_mhz"] = json_or_null<Json>(s->mem_clock_mhz);
  j["mem_clock_max_mhz"] = json_or_null<Json>(s->mem_clock_max_mhz);
  j["utilization_gpu_percent"] = json_or_null<Json>(s->util_gpu_percent);
  j["utilization_memory_percent"] = json_or_null<Json>(s->util_mem_percent);
  j["pstate"] = s->pstate ? Json("P" + std::to_string(*s->pstate)) : Json(nullptr);
  if (s->clocks_event_reasons) {
    j["clocks_event_reasons"] = *s->clocks_event_reasons;
    j["clocks_event_reason_names"] = gpu::reason_names(*s->clocks_event_reasons);
  } else {
    j["clocks_event_reasons"] = nullptr;
    j["clocks_event_reason_names"] = nullptr;
  }
  j["throttle_counters"] = counters_json(s->counters);
  if (s->memory) {
    j["memory"] = Json{{"unified", false},
                       {"total_bytes", s->memory->total_bytes},
                       {"used_bytes", s->memory->used_bytes},
                       {"free_bytes", s->memory->free_bytes}};
  } else {
    j["memory"] = Json{{"unified", true}};  // NOT_SUPPORTED: the pool above is the truth
  }
  if (s->processes) {
    Json procs = Json::array();
    for (const auto& p : *s->processes) {
      procs.push_back(
          Json{{"pid", p.pid}, {"name", p.name}, {"used_bytes", json_or_null<Json>(p.used_bytes)}});
    }
    j["processes"] = procs;
  } else {
    j["processes"] = nullptr;
  }
  return j;
}

Json gpu_json(const GpuStatus& g) {
  Json j{{"backend", g.backend},
         {"state", std::string(gpu::gpu_state_name(g.state))},
         {"detail", g.detail},
         {"driver_version", json_or_null<Json>(g.driver_version)},
         {"process_memory_bytes", json_or_null<Json>(g.process_memory_bytes)}};
  Json devices = Json::array();
  for (std::size_t i = 0; i < g.devices.size(); ++i) {
    const gpu::GpuSnapshot* snap = nullptr;
    for (const auto& s : g.snapshots) {
      if (s.index == g.devices[i].index) snap = &s;
    }
    devices.push_back(device_json(g.devices[i], snap));
  }
  j["devices"] = devices;
  return j;
}

Json workloads_json(const StatusReport& r) {
  if (!r.workloads) return nullptr;
  Json list = Json::array();
  for (const auto& w : *r.workloads) {
    list.push_back(Json{{"pid", w.pid},
                        {"kind", w.kind},
                        {"name", w.name},
                        {"claim_bytes", json_or_null<Json>(w.claim_bytes)},
                        {"actual_bytes", json_or_null<Json>(w.actual_bytes)},
                        {"heavy", w.heavy}});
  }
  return list;
}

// The verdict as fields beside the sentence: a script reads these, never the sentence.
Json coexistence_json(const std::optional<workloads::CoexistenceVerdict>& v) {
  if (!v) return nullptr;
  Json stop = Json::array();
  for (const auto& s : v->stop) stop.push_back(s.pid);
  return Json{{"verdict", workloads::verdict_kind_name(v->kind)},
              {"source", host::budget_source_name(v->source)},
              {"gpu_index", json_or_null<Json>(v->gpu_index)},
              {"heavy_count", v->heavy_count},
              {"room_bytes", v->room_bytes},
              {"reserved_bytes", v->reserved_bytes},
              {"oversubscribed_bytes", v->oversubscribed_bytes},
              {"stop_pids", stop}};
}

}  // namespace

nlohmann::ordered_json status_to_json(const StatusReport& r) {
  Json j;
  j["taken_at"] = format_iso8601_utc_ms(r.taken_at);
  j["sparkops_version"] = r.sparkops_version;
  j["machine"] = Json{{"hostname", json_or_null<Json>(r.system.hostname)},
                      {"kernel", json_or_null<Json>(r.system.kernel_release)},
                      {"arch", json_or_null<Json>(r.system.architecture)},
                      {"os", json_or_null<Json>(r.system.os_pretty_name)},
                      {"board", json_or_null<Json>(r.system.board_model)},
                      {"gb10_evidence", json_or_null<Json>(r.system.gb10_evidence)}};
  j["pool"] = pool_json(r);
  if (r.training_budget) {
    const auto& b = *r.training_budget;
    j["training_budget"] = Json{
        {"bytes", b.bytes},
        {"source", host::budget_source_name(b.source)},
        {"gpu_index", b.device ? Json(b.device->index) : Json(nullptr)},
    };
  } else {
    j["training_budget"] = nullptr;
  }
  j["cgroup"] = cgroup_json(r.cgroup);
  j["memory_pressure"] = pressure_json(r.memory_pressure);
  j["gpu"] = gpu_json(r.gpu);
  Json thermals;
  thermals["hottest_sensor"] =
      r.hottest_sensor
          ? Json{{"name", r.hottest_sensor->name},
                 {"celsius", static_cast<double>(r.hottest_sensor->temp_millicelsius) / 1000.0}}
          : Json(nullptr);
  Json rails = Json::object();
  for (const auto& rail : r.spbm_rails) {
    rails[rail.name] = static_cast<double>(rail.power_microwatts) / 1e6;
  }
  thermals["spbm_rails_watts"] = r.spbm_rails.empty() ? Json(nullptr) : rails;
  thermals["spbm_prochot"] = r.spbm ? json_or_null<Json>(r.spbm->prochot) : Json(nullptr);
  j["thermals"] = thermals;
  j["workloads"] = workloads_json(r);
  j["coexistence"] = r.coexistence.empty() ? Json(nullptr) : Json(r.coexistence);
  j["coexistence_verdict"] = coexistence_json(r.coexistence_verdict);
  // Every warning the table shows is a note here too.
  std::vector<std::string> notes = r.notes;
  for (auto& w : status_warnings(r)) notes.push_back(std::move(w));
  j["notes"] = notes;
  return j;
}

}  // namespace sparkops::status
