#pragma once
// `sparkops procs` output: the workload table with its verdict, and the same as JSON. Pure
// functions of their inputs (pinned by golden files under tests/fixtures/golden/procs/).

#include <cstddef>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "host/pool.hpp"
#include "workloads/coexistence.hpp"
#include "workloads/scan.hpp"

namespace sparkops::workloads {

struct ProcsReport {
  WorkloadScan scan;
  std::optional<host::PoolView> pool;         // absent when /proc/meminfo is unreadable
  std::optional<CoexistenceVerdict> verdict;  // absent without a pool
  bool need_given = false;                    // --need / --plan: the verdict answers a question
  std::string gpu_note;                       // why GPU memory is missing, empty when joined
  // host/pool.hpp training_budget: a discrete GPU's free memory, else the pool's budget.
  std::optional<host::TrainingBudget> training_budget;
};

// width: the terminal's columns (the command line measures them); nullopt keeps natural widths.
// Narrow tables cut the middle of long kind and cap texts and leave out per-process columns by
// priority (the table says which; --json has every field).
std::string render_procs_table(const ProcsReport& report,
                               std::optional<std::size_t> width = std::nullopt);
nlohmann::json procs_to_json(const ProcsReport& report);

}  // namespace sparkops::workloads
