#include "config/plan_defaults.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "base/text.hpp"

namespace sparkops::config {

Result<PlanDefaults> plan_defaults(const Config& config) {
  PlanDefaults d;
  d.framework = config.get_string("plan.framework");
  d.transformers = config.get_string("plan.transformers");
  d.host.process_bytes = config.get_bytes("plan.host_process");
  d.host.dataset_bytes = config.get_bytes("plan.dataset");
  // The key's range is 0..1024 (config_bounds.cpp); the clamp keeps the conversion defined.
  d.host.dataloader_workers = static_cast<std::uint64_t>(
      std::max<std::int64_t>(0, config.get_integer("plan.dataloader_workers")));
  d.host.worker_bytes = config.get_bytes("plan.worker_bytes");
  const std::string page_cache = config.get_string("plan.page_cache");
  if (page_cache != "resident" && page_cache != "dropped") {
    return fail(Errc::invalid_argument,
                fmt::format("config plan.page_cache: unknown value {} (one of resident|dropped)",
                            quote_for_message(page_cache)));
  }
  d.host.page_cache_resident = page_cache == "resident";
  return d;
}

}  // namespace sparkops::config
