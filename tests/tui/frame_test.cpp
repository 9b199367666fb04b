#include "tui/frame.hpp"

#include <gtest/gtest.h>

namespace sparkops::tui {
namespace {

TEST(FrameText, WidthCountsCodePoints) {
  EXPECT_EQ(display_width("abc"), 3u);
  EXPECT_EQ(display_width("▁▂█°C"), 5u);
  EXPECT_EQ(cut_to_width("▁▂█x", 2), "▁▂");
  EXPECT_EQ(cut_to_width("ab", 5), "ab");
}

TEST(FrameText, FitCutsSpansAndRows) {
  Frame f;
  f.push_back(Line().add("hello ").add("█████", Style::bad));
  f.push_back(Line().add("second"));
  fit(f, 8, 1);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].width(), 8u);
  EXPECT_EQ(frame_to_text(f), "hello ██\n");
}

TEST(FrameText, PrintableReplacesControlAndNonAscii) {
  EXPECT_EQ(printable("a\tb\x1b[31m"), "a?b?[31m");
  EXPECT_EQ(printable("caf\xc3\xa9"), "caf?");
  EXPECT_EQ(printable("\x7f"), "?");
}

TEST(FrameText, SparklineScalesAndKeepsGaps) {
  const std::vector<std::optional<double>> v{0.0, 50.0, std::nullopt, 100.0, 150.0};
  EXPECT_EQ(sparkline(v, 0, 100, 10, Glyphs::unicode), "▁▅ ██");
  EXPECT_EQ(sparkline(v, 0, 100, 10, Glyphs::ascii), "_+ @@");
  EXPECT_EQ(sparkline(v, 0, 100, 2, Glyphs::ascii), "@@");  // the newest values
}

}  // namespace
}  // namespace sparkops::tui
