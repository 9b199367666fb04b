#pragma once
// Pure renderers for `sparkops plan`: the worksheet table, its JSON, the fit matrix and the
// catalogue listing. Pinned by golden files under tests/fixtures/golden/plan/.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/catalogue.hpp"
#include "plan/plan.hpp"

namespace sparkops::plan {

// The verdict in words for people ("won't fit", "fits after flush"); JSON keeps verdict_name's
// tokens for scripts. Every text that shows a plan verdict (plan, the serving plan) uses it.
std::string_view verdict_words(plan::Verdict v);

std::string render_plan_text(const plan::PlanResult& r);
nlohmann::json plan_to_json(const plan::PlanResult& r);

struct MatrixCell {
  std::uint64_t seq = 0;
  std::uint64_t batch = 0;
  plan::Estimate estimate;
  plan::Verdict verdict = plan::Verdict::wont_fit;
};
// One row per seq, one column per batch: peak pool GiB and the verdict.
std::string render_matrix_text(const plan::PlanResult& base, const std::vector<MatrixCell>& cells,
                               const std::vector<std::uint64_t>& seqs,
                               const std::vector<std::uint64_t>& batches);
nlohmann::json matrix_to_json(const plan::PlanResult& base, const std::vector<MatrixCell>& cells);

std::string render_catalogue_text(const std::vector<models::CatalogueEntry>& entries);
nlohmann::json catalogue_to_json(const std::vector<models::CatalogueEntry>& entries);

}  // namespace sparkops::plan
