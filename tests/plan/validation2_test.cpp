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
  }
}

// Where the estimator stands on rows it was never fitted to (docs/estimator.md explains the rows
// beyond 15 %). A ratchet at today's state: the bounds only tighten, nothing is tuned to them.
// The worst-row bound moved once, 61 -> 70 %, when the rows' stated accumulation was read (the
// CSV's CRLF had hidden its notes column) and the gradients kept across micro-batches were
// counted: SW49 (+60.4 -> +69.0 %) is a run that met shorter batches than its maximum
// (docs/estimator.md), now above even the fixed-length figure.
TEST(EstimatorValidation2, StaysWithinTodaysBounds) {
  std::vector<double> errors;
  for (const auto& r : rows2()) {
    if (!r.fully_specified) continue;
    errors.push_back(std::fabs(r.error));
    EXPECT_LE(std::fabs(r.error), 0.70) << r.id << " " << r.model << " " << r.error;
  }
  ASSERT_GE(errors.size(), 80u);
  std::sort(errors.begin(), errors.end());
  EXPECT_LE(errors[errors.size() / 2], 0.065);
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
