#pragma once
// Pure renderers for `sparkops plan`: the worksheet table, its JSON, the fit matrix and the
// catalogue listing. Pinned by golden files under tests/fixtures/golden/plan/.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/catalogue.hpp"
#include "plan/fit_matrix.hpp"
#include "plan/plan.hpp"

namespace sparkops::plan {

// The verdict in words for people ("won't fit", "fits after flush"); JSON keeps verdict_name's
// tokens for scripts. Every text that shows a plan verdict (plan, the serving plan) uses it.
std::string_view verdict_words(plan::Verdict v);

std::string render_plan_text(const plan::PlanResult& r);
nlohmann::json plan_to_json(const plan::PlanResult& r);

// One row per seq, one column per batch: the peak on the plan's basis in GiB and the verdict
// (base/table.hpp). Wider than `width` (the terminal's columns; nullopt: no limit), the batch
// columns wrap: the matrix is printed in blocks of as many batches as fit, each with the seq
// column, so no figure is ever cut or left out.
std::string render_matrix_text(const plan::PlanResult& base, const std::vector<MatrixCell>& cells,
                               const std::vector<std::uint64_t>& seqs,
                               const std::vector<std::uint64_t>& batches,
                               std::optional<std::size_t> width = std::nullopt);
nlohmann::json matrix_to_json(const plan::PlanResult& base, const std::vector<MatrixCell>& cells);

// The catalogue (`plan --list`) as a base/table.hpp table fitted to `width`: the repo column
// elides first, then vocab, heads/kv, hidden, layers and active are left out in that order (name
// and params always stay; --json has every field).
std::string render_catalogue_text(const std::vector<models::CatalogueEntry>& entries,
                                  std::optional<std::size_t> width = std::nullopt);
nlohmann::json catalogue_to_json(const std::vector<models::CatalogueEntry>& entries);

}  // namespace sparkops::plan
