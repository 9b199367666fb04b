#pragma once
// The one place where the effective configuration and the machine become domain options. Every
// command that shows a pool, plans a run or diagnoses a log asks here, so the same machine gives
// the same budget in status, plan, procs, oom, watch and serve
// (tests/cli/budget_agreement_test.cpp).

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "config/config.hpp"
#include "diagnose/diagnosis.hpp"
#include "host/host_root.hpp"
#include "host/pool.hpp"
#include "plan/plan.hpp"

namespace sparkops::cli {

// pool.overhead, pool.swap_counts and pool.flush_hint_gap; `overhead` (a command's --overhead)
// wins over pool.overhead when set.
PoolOptions pool_options_from_config(const Config& config,
                                     std::optional<std::uint64_t> overhead = std::nullopt);

// The pool as every command reports it: /proc/meminfo and the cgroup limit under `root`, with the
// config's pool options (host/pool.hpp read_pool).
Result<PoolView> current_pool(const HostRoot& root, const Config& config,
                              std::optional<std::uint64_t> overhead = std::nullopt);

// ~/.local/share/sparkops/anchors.jsonl ($XDG_DATA_HOME/sparkops/anchors.jsonl when set); empty
// when neither variable is set. `watch` appends measured anchors here; `plan` reads them back.
std::filesystem::path user_anchor_file();

// What plan::make_plan needs from this machine: the root, the pool options, the Hugging Face cache
// variables, the embedded anchors and the user's (a malformed user file adds a note and is
// skipped).
plan::PlanEnvironment plan_environment(const HostRoot& root, const Config& config,
                                       std::vector<std::string>* notes = nullptr);

// analyze.* and thermal.* as slowdown-diagnosis options (analyze and watch's summary).
diagnose::DiagnoseOptions diagnose_options_from_config(const Config& config);

}  // namespace sparkops::cli
