#include <gtest/gtest.h>

#include "report/analysis_json.hpp"
#include "report/report_fixture.hpp"
#include "support/test_support.hpp"

namespace sparkops::report {
namespace {

TEST(AnalysisJson, SyntheticRunMatchesGolden) {
  const auto run = test::analysed_run();
  const auto j = analysis_to_json("train.log", run.series, run.diagnosis, &run.thermal);
  test::expect_golden("golden/analyze/synthetic.json", j.dump(2) + "\n");
}

TEST(AnalysisJson, HasTheDocumentedKeys) {
  const auto run = test::analysed_run();
  const auto j = analysis_to_json("train.log", run.series, run.diagnosis, &run.thermal);
  for (const char* key : {"format", "steps", "first_step", "last_step", "median_step_seconds",
                          "slowdowns", "pauses"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  ASSERT_EQ(j["slowdowns"].size(), 2u);
  for (const char* key : {"start", "end", "ratio", "cause", "evidence"}) {
    EXPECT_TRUE(j["slowdowns"][0].contains(key)) << key;
  }
  EXPECT_EQ(j["slowdowns"][0]["cause"], "thermal");
  EXPECT_EQ(j["slowdowns"][1]["cause"], "contention");
  EXPECT_EQ(j["steps"], 400);
}

}  // namespace
}  // namespace sparkops::report
