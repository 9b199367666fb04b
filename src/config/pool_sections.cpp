#include "config/pool_sections.hpp"

namespace sparkops::config {

PoolSettings pool_settings(const Config& config) {
  PoolSettings s;
  s.overhead_bytes = config.get_bytes("pool.overhead");
  s.swap = config.get_bool("pool.swap_counts") ? SwapPolicy::counted : SwapPolicy::excluded;
  s.flush_hint_gap_bytes = config.get_bytes("pool.flush_hint_gap");
  return s;
}

HeavyRules heavy_rules(const Config& config) {
  HeavyRules r;
  r.small_workload_bytes = config.get_bytes("procs.small_workload");
  r.near_capacity_fraction = config.get_number("procs.near_capacity_fraction");
  r.orphan_min_bytes = config.get_bytes("procs.orphan_min");
  return r;
}

CoexistenceMargin coexistence_margin(const Config& config) {
  CoexistenceMargin m;
  m.tight_margin_bytes = config.get_bytes("procs.tight_margin");
  return m;
}

}  // namespace sparkops::config
