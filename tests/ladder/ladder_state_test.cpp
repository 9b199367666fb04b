#include "ladder/ladder_state.hpp"

#include <gtest/gtest.h>

#include "support/test_support.hpp"

namespace sparkops::ladder {
namespace {

const SystemTime kAt{std::chrono::seconds{1762680372}};

LadderState sample_state() {
  LadderState state;
  state.created = kAt;
  state.steps.push_back(
      StepRecord{LadderStep::flush, kAt, StepResult::oom, false, "reclaimed 12.0 GiB"});
  state.steps.push_back(
      StepRecord{LadderStep::packing, kAt + std::chrono::hours(1), StepResult::ok, true, ""});
  state.last_oom = LastOom{"cuda_allocator", "step", kAt};
  return state;
}

TEST(LadderState, SerializedFormIsPinned) {
  test::expect_golden("golden/ladder/state.json", serialize_ladder_state(sample_state()));
}

TEST(LadderState, RoundTripsThroughAFile) {
  test::TempDir dir;
  const auto path = dir / ".sparkops/ladder.json";
  ASSERT_TRUE(save_ladder_state(path, sample_state()));
  auto loaded = load_ladder_state(path);
  ASSERT_TRUE(loaded.has_value()) << loaded.error().detail;
  ASSERT_EQ(loaded->steps.size(), 2U);
  EXPECT_EQ(loaded->steps[1].step, LadderStep::packing);
  EXPECT_TRUE(loaded->steps[1].forced);
  EXPECT_EQ(loaded->steps[0].note, "reclaimed 12.0 GiB");
  EXPECT_TRUE(loaded->resolved());
  EXPECT_EQ(serialize_ladder_state(*loaded), serialize_ladder_state(sample_state()));
}

TEST(LadderState, MissingFileIsNotFound) {
  test::TempDir dir;
  const auto loaded = load_ladder_state(dir / "none.json");
  ASSERT_FALSE(loaded.has_value());
  EXPECT_EQ(loaded.error().code, Errc::not_found);
}

TEST(LadderState, CorruptFileIsReportedNeverReset) {
  for (const std::string_view text :
       {"", "{", "[]", "{\"version\": 1}",
        "{\"version\": 2, \"created\": \"2025-11-09T09:26:12.000Z\", \"steps\": []}",
        "{\"version\": 1, \"created\": \"yesterday\", \"steps\": []}",
        "{\"version\": 1, \"created\": \"2025-11-09T09:26:12.000Z\", \"steps\": [{\"step\": \"9\", "
        "\"at\": \"2025-11-09T09:26:12.000Z\", \"result\": \"oom\"}]}",
        "{\"version\": 1, \"created\": \"2025-11-09T09:26:12.000Z\", \"steps\": [{\"step\": \"1\", "
        "\"at\": \"2025-11-09T09:26:12.000Z\", \"result\": \"maybe\"}]}",
        "\x01\x02garbage"}) {
    const auto parsed = parse_ladder_state(text, "ladder.json");
    ASSERT_FALSE(parsed.has_value()) << text;
    EXPECT_EQ(parsed.error().code, Errc::malformed);
    EXPECT_NE(parsed.error().detail.find("ladder.json: corrupt ladder state"), std::string::npos);
  }
}

}  // namespace
}  // namespace sparkops::ladder
