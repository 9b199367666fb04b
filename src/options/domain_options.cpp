#include "options/domain_options.hpp"

#include <cstdlib>

#include <fmt/format.h>

#include "base/file_io.hpp"
#include "host/clock_ticks.hpp"
#include "plan/anchors.hpp"

namespace sparkops::options {

namespace {

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

}  // namespace

host::PoolOptions pool_options_from_config(const config::Config& config,
                                           std::optional<std::uint64_t> overhead) {
  host::PoolOptions options = config::pool_settings(config);
  if (overhead) options.overhead_bytes = *overhead;
  return options;
}

Result<host::PoolView> current_pool(const host::HostRoot& root, const config::Config& config,
                                    std::optional<std::uint64_t> overhead) {
  return host::read_pool(root, pool_options_from_config(config, overhead));
}

workloads::HeavyRules heavy_rules_from_config(const config::Config& config) {
  return config::heavy_rules(config);
}

workloads::CoexistenceOptions coexistence_options_from_config(const config::Config& config) {
  return config::coexistence_margin(config);
}

exporter::ServeDefaults serve_defaults_from_config(const config::Config& config) {
  return config::serve_settings(config);
}

std::filesystem::path user_anchor_file() {
  const std::string xdg = env_or_empty("XDG_DATA_HOME");
  if (!xdg.empty()) return std::filesystem::path(xdg) / "sparkops" / "anchors.jsonl";
  const std::string home = env_or_empty("HOME");
  if (home.empty()) return {};
  return std::filesystem::path(home) / ".local" / "share" / "sparkops" / "anchors.jsonl";
}

plan::PlanEnvironment plan_environment(const host::HostRoot& root, const config::Config& config,
                                       std::vector<std::string>* notes) {
  plan::PlanEnvironment env;
  env.root = root;
  env.pool_options = pool_options_from_config(config);
  env.hf_cache = {env_or_empty("HF_HUB_CACHE"), env_or_empty("HF_HOME"), env_or_empty("HOME")};
  env.anchors = plan::embedded_anchors();
  if (const auto path = user_anchor_file(); !path.empty()) {
    if (auto text = read_file(path)) {
      if (auto user = plan::parse_anchors_jsonl(*text, path.string())) {
        env.anchors.insert(env.anchors.end(), user->begin(), user->end());
      } else if (notes != nullptr) {
        notes->push_back(fmt::format("user anchors skipped: {}", user.error().detail));
      }
    }
  }
  return env;
}

models::HubAccess hub_access_for(const models::HttpClient* client) {
  models::HubAccess hub = models::hub_access_from_env(
      {env_or_empty("HF_ENDPOINT"), env_or_empty("HF_TOKEN"), env_or_empty("HF_TOKEN_PATH"),
       env_or_empty("HF_HOME"), env_or_empty("HOME"), env_or_empty("HF_HUB_OFFLINE")});
  hub.client = client;
  return hub;
}

diagnose::DiagnoseOptions diagnose_options_from_config(const config::Config& config) {
  diagnose::DiagnoseOptions o;
  o.slowdown = config::slowdown_thresholds(config);
  o.thermal = config::thermal_thresholds(config);
  return o;
}

status::StatusOptions status_options_for(const host::HostRoot& root, const config::Config& config) {
  status::StatusOptions options;
  options.pool = pool_options_from_config(config);
  options.ticks_per_second = host::clock_ticks_per_second(root);
  return options;
}

Result<sampling::AppenderOptions> appender_options_from_config(const config::Config& config,
                                                               OutputTrust trust) {
  const auto settings = config::sample_settings(config);
  const auto fsync_every = settings.fsync_every;
  const auto buffer_rows = settings.memory_buffer_rows;
  if (fsync_every < 0 || buffer_rows < 1) {
    return fail(Errc::invalid_argument,
                "sample.fsync_every must be >= 0 and sample.memory_buffer_rows >= 1");
  }
  sampling::AppenderOptions o;
  o.fsync_every = static_cast<std::size_t>(fsync_every);
  o.memory_buffer_rows = static_cast<std::size_t>(buffer_rows);
  o.trust = trust;
  return o;
}

}  // namespace sparkops::options
