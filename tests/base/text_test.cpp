#include "base/text.hpp"

#include <gtest/gtest.h>

namespace sparkops {

TEST(TextParse, WholeStringIntegersRejectJunk) {
  EXPECT_EQ(parse_u64(" 42 "), 42u);
  EXPECT_EQ(parse_u64("42kB"), std::nullopt);
  EXPECT_EQ(parse_u64(""), std::nullopt);
  EXPECT_EQ(parse_u64("-1"), std::nullopt);
  EXPECT_EQ(parse_u64("99999999999999999999999"), std::nullopt);
  EXPECT_EQ(parse_i64("-17"), -17);
}

TEST(TextParse, HexAcceptsPrefix) {
  EXPECT_EQ(parse_hex_u64("0x0000000000000004"), 4u);
  EXPECT_EQ(parse_hex_u64("ff"), 255u);
  EXPECT_EQ(parse_hex_u64("0xzz"), std::nullopt);
}

TEST(TextParse, DoublesAreLocaleFree) {
  EXPECT_DOUBLE_EQ(*parse_double("11.23"), 11.23);
  EXPECT_EQ(parse_double("11,23"), std::nullopt);
  const auto lead = parse_leading_double("11.23 W");
  ASSERT_TRUE(lead);
  EXPECT_DOUBLE_EQ(lead->value, 11.23);
  EXPECT_EQ(lead->rest, " W");
}

TEST(TextSplit, KeepsEmptyFieldsAndDropsWhitespaceRuns) {
  EXPECT_EQ(split("a,,b", ',').size(), 3u);
  EXPECT_EQ(split_ws("  a \t b  ").size(), 2u);
  EXPECT_EQ(split_lines("x\ny\n").size(), 2u);
  EXPECT_EQ(split_lines("x\ny").size(), 2u);
}

TEST(TextQuote, EscapesControlBytesAndCuts) {
  EXPECT_EQ(quote_for_message(std::string_view("a\0b", 3)), "\"a\\x00b\"");
  EXPECT_EQ(quote_for_message(std::string(200, 'x'), 10).size(), 15u);
}

TEST(TextCase, IcontainsIgnoresAsciiCase) {
  EXPECT_TRUE(icontains("CUDA Out Of Memory", "out of memory"));
  EXPECT_FALSE(icontains("memory", "out of memory"));
}

}  // namespace sparkops
