// The ladder's order is the skill's: flush, packing, batch, bf16 LoRA, QLoRA, scale; never skip.

#include "ladder/ladder.hpp"

#include <gtest/gtest.h>

namespace sparkops::ladder {
namespace {

const SystemTime kAt{std::chrono::seconds{1762680372}};

LadderContext full_run(std::uint64_t batch = 4) {
  return {plan::Method::full, batch};
}

TEST(LadderOrder, FirstStepIsFlushNeverBatch) {
  LadderState state;
  EXPECT_EQ(next_step(state, full_run()), LadderStep::flush);
  EXPECT_EQ(next_step(state, LadderContext{}), LadderStep::flush);
  EXPECT_NE(kLadderOrder[0], LadderStep::batch);
}

TEST(LadderOrder, BatchIsRefusedAsTheFirstStep) {
  LadderState state;
  const auto refused =
      record_step(state, LadderStep::batch, StepResult::oom, kAt, full_run(), Force::no);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, Errc::conflict);
  EXPECT_NE(refused.error().detail.find("step 1 (flush the page cache) has not been tried"),
            std::string::npos)
      << refused.error().detail;
  EXPECT_TRUE(state.steps.empty());
}

TEST(LadderOrder, PackingComesBeforeBatch) {
  LadderState state;
  ASSERT_TRUE(record_step(state, LadderStep::flush, StepResult::oom, kAt, full_run(), Force::no));
  EXPECT_EQ(next_step(state, full_run()), LadderStep::packing);
  const auto refused =
      record_step(state, LadderStep::batch, StepResult::oom, kAt, full_run(), Force::no);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().detail.find("packing length drives activations"), std::string::npos);
  ASSERT_TRUE(record_step(state, LadderStep::packing, StepResult::oom, kAt, full_run(), Force::no));
  EXPECT_EQ(next_step(state, full_run()), LadderStep::batch);
}

TEST(LadderOrder, Bf16LoraComesBeforeQlora) {
  LadderState state;
  for (const auto s : {LadderStep::flush, LadderStep::packing, LadderStep::batch}) {
    ASSERT_TRUE(record_step(state, s, StepResult::oom, kAt, full_run(), Force::no));
  }
  EXPECT_EQ(next_step(state, full_run()), LadderStep::method_lora);
  EXPECT_FALSE(
      record_step(state, LadderStep::method_qlora, StepResult::oom, kAt, full_run(), Force::no));
  ASSERT_TRUE(
      record_step(state, LadderStep::method_lora, StepResult::oom, kAt, full_run(), Force::no));
  EXPECT_EQ(next_step(state, full_run()), LadderStep::method_qlora);
  ASSERT_TRUE(
      record_step(state, LadderStep::method_qlora, StepResult::oom, kAt, full_run(), Force::no));
  EXPECT_EQ(next_step(state, full_run()), LadderStep::scale);
  ASSERT_TRUE(record_step(state, LadderStep::scale, StepResult::oom, kAt, full_run(), Force::no));
  EXPECT_EQ(next_step(state, full_run()), std::nullopt);
}

TEST(LadderOrder, ScaleIsRefusedBeforeTheMethodTiers) {
  LadderState state;
  for (const auto s : {LadderStep::flush, LadderStep::packing, LadderStep::batch}) {
    ASSERT_TRUE(record_step(state, s, StepResult::oom, kAt, full_run(), Force::no));
  }
  const auto refused =
      record_step(state, LadderStep::scale, StepResult::oom, kAt, full_run(), Force::no);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().detail.find("step 3a"), std::string::npos);
}

TEST(LadderOrder, ForceRecordsASkipAndMarksIt) {
  LadderState state;
  ASSERT_TRUE(record_step(state, LadderStep::batch, StepResult::oom, kAt, full_run(), Force::yes));
  ASSERT_EQ(state.steps.size(), 1U);
  EXPECT_TRUE(state.steps[0].forced);
  EXPECT_EQ(next_step(state, full_run()), LadderStep::flush);  // skipped steps still come first
}

TEST(LadderOrder, MethodStepsThatDoNotApplyAreSkippedAndRefused) {
  const LadderContext lora{plan::Method::lora, 2};
  LadderState state;
  for (const auto s : {LadderStep::flush, LadderStep::packing, LadderStep::batch}) {
    ASSERT_TRUE(record_step(state, s, StepResult::oom, kAt, lora, Force::no));
  }
  EXPECT_EQ(next_step(state, lora), LadderStep::method_qlora);
  const auto refused =
      record_step(state, LadderStep::method_lora, StepResult::oom, kAt, lora, Force::no);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().detail.find("does not apply: the run is already lora"),
            std::string::npos);
  const LadderContext qlora{plan::Method::qlora, 2};
  EXPECT_EQ(next_step(state, qlora), LadderStep::scale);
}

TEST(LadderOrder, BatchOfOneHasNothingToCut) {
  const LadderContext one{plan::Method::lora, 1};
  LadderState state;
  ASSERT_TRUE(record_step(state, LadderStep::flush, StepResult::oom, kAt, one, Force::no));
  ASSERT_TRUE(record_step(state, LadderStep::packing, StepResult::oom, kAt, one, Force::no));
  EXPECT_EQ(next_step(state, one), LadderStep::method_qlora);
}

TEST(LadderOrder, AnOkResultResolvesTheLadder) {
  LadderState state;
  ASSERT_TRUE(record_step(state, LadderStep::flush, StepResult::ok, kAt, full_run(), Force::no));
  EXPECT_TRUE(state.resolved());
  EXPECT_EQ(next_step(state, full_run()), std::nullopt);
}

TEST(LadderSteps, IdsAndNamesParse) {
  EXPECT_EQ(parse_step("2a"), LadderStep::packing);
  EXPECT_EQ(parse_step("batch"), LadderStep::batch);
  EXPECT_EQ(parse_step("3b"), LadderStep::method_qlora);
  EXPECT_EQ(parse_step("5"), std::nullopt);
}

}  // namespace
}  // namespace sparkops::ladder
