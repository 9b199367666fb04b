#pragma once
// The one place where the effective configuration and the machine become domain options. Every
// command that shows a pool, plans a run or diagnoses a log asks here, so the same machine gives
// the same budget in status, plan, procs, oom, watch and serve
// (tests/cli/budget_agreement_test.cpp). It sits above the modules whose options it builds and
// below cli, which only passes them on.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "config/config.hpp"
#include "diagnose/diagnosis.hpp"
#include "exporter/serve_session.hpp"
#include "host/host_root.hpp"
#include "host/pool.hpp"
#include "models/http_client.hpp"
#include "models/hub.hpp"
#include "plan/plan.hpp"
#include "sampling/appender.hpp"
#include "status/status_report.hpp"
#include "workloads/coexistence.hpp"
#include "workloads/scan.hpp"

namespace sparkops::options {

// pool.overhead, pool.swap_counts and pool.flush_hint_gap; `overhead` (a command's --overhead)
// wins over pool.overhead when set.
host::PoolOptions pool_options_from_config(const config::Config& config,
                                           std::optional<std::uint64_t> overhead = std::nullopt);

// The pool as every command reports it: /proc/meminfo and the cgroup limit under `root`, with the
// config's pool options (host/pool.hpp read_pool).
Result<host::PoolView> current_pool(const host::HostRoot& root, const config::Config& config,
                                    std::optional<std::uint64_t> overhead = std::nullopt);

// procs.small_workload, procs.near_capacity_fraction and procs.orphan_min: what makes a workload
// heavy (procs, and the serving flags' --beside).
workloads::HeavyRules heavy_rules_from_config(const config::Config& config);

// procs.tight_margin: below this much room a coexistence verdict is "tight".
workloads::CoexistenceOptions coexistence_options_from_config(const config::Config& config);

// serve.listen, serve.interval and serve.max_workloads: what `serve` does without its flags.
exporter::ServeDefaults serve_defaults_from_config(const config::Config& config);

// ~/.local/share/sparkops/anchors.jsonl ($XDG_DATA_HOME/sparkops/anchors.jsonl when set); empty
// when neither variable is set. `watch` appends measured anchors here; `plan` reads them back.
std::filesystem::path user_anchor_file();

// What plan::make_plan needs from this machine: the root, the pool options, the Hugging Face cache
// variables, the embedded anchors and the user's (a malformed user file adds a note and is
// skipped).
plan::PlanEnvironment plan_environment(const host::HostRoot& root, const config::Config& config,
                                       std::vector<std::string>* notes = nullptr);

// The Hugging Face Hub as `plan` reaches it through `client` (the one command that may go online):
// HF_ENDPOINT, HF_TOKEN, HF_TOKEN_PATH, HF_HOME, HOME and HF_HUB_OFFLINE.
models::HubAccess hub_access_for(const models::HttpClient* client);

// analyze.* and thermal.* as slowdown-diagnosis options (analyze and watch's summary; watch's
// live events take the same config/slowdown_thresholds.hpp section).
diagnose::DiagnoseOptions diagnose_options_from_config(const config::Config& config);

// What collect_status needs from the config and the machine, the same for every command that
// shows the status (status, top, watch's pre-flight, serve): the pool options and USER_HZ.
status::StatusOptions status_options_for(const host::HostRoot& root, const config::Config& config);

// sample.fsync_every and sample.memory_buffer_rows for the sample file (sample and watch), with
// the output rule `trust`. Errors name the keys.
Result<sampling::AppenderOptions> appender_options_from_config(const config::Config& config,
                                                               OutputTrust trust);

}  // namespace sparkops::options
