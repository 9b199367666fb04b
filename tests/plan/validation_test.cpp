#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include "models/catalogue.hpp"
#include "support/test_support.hpp"
#include "validation.hpp"

namespace sparkops::plan::validation {
namespace {

std::vector<Row> rows() {
  return evaluate(test::slurp(test::fixture("plan/memory-measured.csv")));
}

// Where the mechanism-derived estimator stands on these rows (docs/estimator.md explains every
// row beyond 10 %): median |error| <= 3 %, no row beyond 11 % (were 11 % and 29 % before the
// LitGPT rows took their yaml's LoRA settings and accumulation, phi-2/StableLM/Falcon their
// config's layer program, and accumulated gradients counted through forward and backward; 5 %
// and 28 % before the Megatron-Core rows ran GPT-2's block and their loop's order). No row beyond
// 8 % since LitGPT's full fine-tunes run finetune/full.py's loss on the whole head (L03 -10.7 ->
// -7.7 %).
// Bounds only ever tighten; no estimator constant is tuned to them.
TEST(EstimatorValidation, MeetsAccuracyTargetsOnEveryFullySpecifiedRow) {
  const auto all = rows();
  std::vector<double> errors;
  for (const auto& r : all) {
    if (!r.fully_specified) continue;
    errors.push_back(std::fabs(r.error));
    EXPECT_LE(std::fabs(r.error), 0.08) << r.id << " " << r.model << " error " << r.error;
  }
  ASSERT_GE(errors.size(), 25u);
  std::sort(errors.begin(), errors.end());
  const std::size_t m = errors.size() / 2;
  const double median = errors.size() % 2 == 1 ? errors[m] : (errors[m - 1] + errors[m]) / 2.0;
  EXPECT_LE(median, 0.03);
}

TEST(EstimatorValidation, PinsAHandfulOfRows) {
  const auto all = rows();
  auto find = [&](std::string_view id) {
    return *std::find_if(all.begin(), all.end(), [&](const Row& r) { return r.id == id; });
  };
  // Pinned to 0.1 percentage point: a formula change shows up here first. L20 -2.4 -> -1.4 %:
  // LitGPT finetune/full.py's loss on the whole head's fp32 logits (split's cat and slice's
  // full-size gradient beside the loop's logits: RunConfig::whole_head).
  const std::pair<std::string_view, double> pins[] = {
      {"S04", 0.002},  {"S11", 0.000}, {"L12", -0.001}, {"L13", -0.017},
      {"L20", -0.014}, {"L07", 0.014}, {"L11", -0.024}};
  for (const auto& [id, error] : pins) {
    const Row r = find(id);
    ASSERT_TRUE(r.fully_specified) << id;
    EXPECT_NEAR(r.error, error, 0.001) << id;
  }
}

TEST(EstimatorValidation, OomRowsEstimateAboveTheCard) {
  // L06/L08 ran out of memory on a 24 GB A10G: what the device must hold (allocated peak, context,
  // allocator reserve) must not claim they fit in ~22 GB.
  int checked = 0;
  for (const auto& r : rows()) {
    if (!r.oom_above_bytes) continue;
    ASSERT_TRUE(r.estimated) << r.id;
    EXPECT_GT(r.pool_estimate_bytes, *r.oom_above_bytes) << r.id;
    ++checked;
  }
  EXPECT_EQ(checked, 2);
}

TEST(EstimatorValidation, DocsCarryTheGeneratedTable) {
  const std::string table = markdown_table(rows());
  test::expect_golden("golden/plan/validation.md", table);
  const std::string doc = test::slurp(test::fixture("../../docs/estimator.md"));
  EXPECT_NE(doc.find(table), std::string::npos)
      << "docs/estimator.md must contain tests/fixtures/golden/plan/validation.md verbatim";
}

}  // namespace
}  // namespace sparkops::plan::validation
