#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include "support/test_support.hpp"
#include "validation.hpp"

namespace sparkops::plan::validation {
namespace {

std::vector<Row> rows2() {
  return evaluate_v2(test::slurp(test::fixture("plan/memory-measured-2.csv")));
}

TEST(EstimatorValidation2, EveryRowIsMappedOrExcludedWithAReason) {
  const auto all = rows2();
  EXPECT_EQ(all.size(), 180u);
  for (const auto& r : all) {
    EXPECT_FALSE(r.id.empty());
    if (!r.fully_specified) {
      EXPECT_FALSE(r.excluded_reason.empty()) << r.id;
    }
    // ms-swift 1.x (peft 0.7's update_layer): LoRA adapters in the bf16 base's dtype, QLoRA's
    // in their fp32 creation dtype (a 4-bit weight is uint8).
    if (r.id.rfind("SW", 0) == 0 && r.run.method != Method::full) {
      EXPECT_EQ(r.run.adapter_fp32, r.run.method == Method::qlora) << r.id;
    }
  }
}

// How far a measured figure lies outside the row's range (0 inside it; the point error for a row
// without one).
double distance_to_range(const Row& r) {
  if (!(r.range_high_bytes > r.range_low_bytes) || !(r.measured_bytes > 0))
    return std::fabs(r.error);
  if (r.measured_bytes < r.range_low_bytes)
    return (r.range_low_bytes - r.measured_bytes) / r.measured_bytes;
  if (r.measured_bytes > r.range_high_bytes)
    return (r.measured_bytes - r.range_high_bytes) / r.measured_bytes;
  return 0.0;
}

// Where the estimator stands on rows it was never fitted to (docs/estimator.md explains the rows
// beyond 15 %). A ratchet at today's state, nothing tuned to it. A row with varying lengths is
// estimated at the top of its range (the rising-shapes replay), so it is held twice: the point
// figure, and how far the measurement lies outside the range. The point bounds moved twice:
// 61 -> 70 % when the rows' stated accumulation was read (SW49 +60.4 -> +69.0 %), and median
// 6.5 -> 8 %, worst 70 -> 145 % when the replay took the loss's tensors one by one instead of
// one block a phase (a lumped block let a shorter step's loss serve the next, longer one; the
// separate tensors cannot): the rising bound went up while the ranges went from holding 15 of
// 61 measurements to 38 of 60, the median distance to the range from 3.0 % to 0.1 %. ms-swift
// 1.x's LoRA adapters read as bf16 (peft 0.7) then made it 39 of 60 and 0.2 % (SW29).
// Tightened to median 7 %, worst 105 % when the replay took the card's memory as the allocator's
// capacity (release_cached_blocks and a retry: SW56 +139.4 -> +0.5 %, SW53 +24.0 -> -0.5 %, the
// worst now SW49 at +101.9 %). Tightened to 6.5 % when LitGPT's full fine-tunes ran
// finetune/full.py's loss and the FSDP optimizer step held shards (LC13 +9.5 -> -0.6 %, LC17
// +5.6 -> -0.9 %). Today (golden/plan/validation2.md): point median 5.7 % (the mean of the two
// middle rows; this test holds the upper one, 6.4 %), worst SW49 +101.9 %, 39 of 60 ranges hold
// their measurement, 3 rows more than 15 % outside.
TEST(EstimatorValidation2, StaysWithinTodaysBounds) {
  std::vector<double> errors, distances;
  for (const auto& r : rows2()) {
    if (!r.fully_specified) continue;
    errors.push_back(std::fabs(r.error));
    distances.push_back(distance_to_range(r));
    EXPECT_LE(std::fabs(r.error), 1.05) << r.id << " " << r.model << " " << r.error;
    EXPECT_LE(distance_to_range(r), 0.45) << r.id << " " << r.model;
  }
  ASSERT_GE(errors.size(), 80u);
  std::sort(errors.begin(), errors.end());
  std::sort(distances.begin(), distances.end());
  EXPECT_LE(errors[errors.size() / 2], 0.065);
  EXPECT_LE(distances[distances.size() / 2], 0.005);
  // Rows more than 15 % outside their range: SW20 (ChatGLM3 at 8k), SW71 (Qwen-72B QLoRA), SW19.
  EXPECT_LE(std::count_if(distances.begin(), distances.end(), [](double d) { return d > 0.15; }),
            3);
}

TEST(EstimatorValidation2, DocsCarryTheGeneratedTable) {
  const std::string table = markdown_table_v2(rows2());
  test::expect_golden("golden/plan/validation2.md", table);
  const std::string doc = test::slurp(test::fixture("../../docs/estimator.md"));
  EXPECT_NE(doc.find(table), std::string::npos)
      << "docs/estimator.md must contain tests/fixtures/golden/plan/validation2.md verbatim";
}

}  // namespace
}  // namespace sparkops::plan::validation
