// `sparkops plan` carries the one-heavy-job verdict as a line when something runs on the pool
// (docs/procs.md: the same verdict in status, plan, procs and watch).

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/test_support.hpp"

namespace sparkops {
namespace {

TEST(PlanCoexistence, HeavyUncappedVllmIsNamedBesideThePlan) {
  const auto res =
      test::run_sparkops({"--root", test::fixture("procs/vllm_uncapped_orphan").string(), "plan",
                          "Llama-3.1-8B", "--method", "lora", "--json"});
  ASSERT_LT(res.exit_code, 2) << res.err;
  const auto j = nlohmann::json::parse(res.out);
  bool found = false;
  for (const auto& n : j["notes"]) {
    const auto text = n.get<std::string>();
    if (text.find("beside what runs (stop_first)") != std::string::npos) {
      found = true;
      EXPECT_NE(text.find("5000"), std::string::npos) << text;
    }
  }
  EXPECT_TRUE(found) << res.out;
}

TEST(PlanCoexistence, QuietPoolAddsNoLine) {
  const auto res = test::run_sparkops({"--root", test::fixture("roots/gb10-idle").string(), "plan",
                                       "Llama-3.1-8B", "--method", "lora"});
  ASSERT_LT(res.exit_code, 2) << res.err;
  EXPECT_EQ(res.out.find("beside what runs"), std::string::npos) << res.out;
}

}  // namespace
}  // namespace sparkops
