#include "term/colour.hpp"

#include <cstdio>

#include <gtest/gtest.h>

namespace sparkops::term {
namespace {

constexpr std::string_view kRed = "\x1b[1;31m";
constexpr std::string_view kGreen = "\x1b[32m";
constexpr std::string_view kYellow = "\x1b[33m";
constexpr std::string_view kBold = "\x1b[1m";

bool painted(const std::string& text, std::string_view line, std::string_view sgr) {
  return text.find(std::string(sgr) + std::string(line) + "\x1b[0m") != std::string::npos;
}

TEST(Colour, OffLeavesTextByteIdentical) {
  const std::string text =
      "POOL  x\n  ! free now is low\nVerdict: one heavy job at a time: stop 6100\n";
  EXPECT_EQ(paint_lines(text, false), text);
}

TEST(Colour, VerdictsWarningsAndHeadingsGetTheirTones) {
  const std::string text =
      "POOL  unified memory\n"
      "  ! free now is 25.0 GiB below available\n"
      "Verdict                       fits\n"
      "Verdict                       does_not_fit\n"
      "Verdict: one heavy job at a time: stop 6100 (vLLM)\n"
      "  a new run can take up to 26.0 GiB beside what is running\n"
      "  throttle now: software thermal slowdown\n"
      "  throttle now: none\n"
      "note: shard size assumed\n"
      "  plain figure 12\n";
  const std::string out = paint_lines(text, true);
  EXPECT_TRUE(painted(out, "POOL  unified memory", kBold));
  EXPECT_TRUE(painted(out, "  ! free now is 25.0 GiB below available", kYellow));
  EXPECT_TRUE(painted(out, "Verdict                       fits", kGreen));
  EXPECT_TRUE(painted(out, "Verdict                       does_not_fit", kRed));
  EXPECT_TRUE(painted(out, "Verdict: one heavy job at a time: stop 6100 (vLLM)", kRed));
  EXPECT_TRUE(painted(out, "  a new run can take up to 26.0 GiB beside what is running", kGreen));
  EXPECT_TRUE(painted(out, "  throttle now: software thermal slowdown", kRed));
  EXPECT_TRUE(painted(out, "  throttle now: none", kGreen));
  EXPECT_TRUE(painted(out, "note: shard size assumed", kYellow));
  EXPECT_NE(out.find("\n  plain figure 12\n"), std::string::npos);
}

TEST(Colour, PipesAndTheFlagTurnItOff) {
  // A pipe is never a terminal.
  std::FILE* pipe_end = ::popen("true", "w");
  ASSERT_NE(pipe_end, nullptr);
  EXPECT_FALSE(colour_enabled(pipe_end, false));
  ::pclose(pipe_end);
  EXPECT_FALSE(colour_enabled(stdout, true));
}

}  // namespace
}  // namespace sparkops::term
