// Bad input: a clear error or a partial result that says what was skipped; never a crash.

#include <gtest/gtest.h>

#include "support/test_support.hpp"
#include "trainlog/parse_log.hpp"

namespace sparkops::trainlog {
namespace {

TEST(BadInput, EmptyFileIsAnError) {
  const auto s = parse_log_text("", ParseOptions{});
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.error().detail.find("empty"), std::string::npos);
}

TEST(BadInput, UnknownFormatListsKnownFormats) {
  const auto s = parse_log_text("hello\nworld\n", ParseOptions{});
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.error().detail.find("megatron"), std::string::npos);
  EXPECT_NE(s.error().detail.find("mlx_lm"), std::string::npos);
}

TEST(BadInput, BinaryJunkIsAnError) {
  std::string junk(4096, '\0');
  for (std::size_t i = 0; i < junk.size(); i += 7) junk[i] = static_cast<char>(i * 31 % 251);
  const auto s = parse_log_text(junk, ParseOptions{});
  ASSERT_FALSE(s.has_value());
}

TEST(BadInput, BinaryLinesInsideALogAreSkippedAndCounted) {
  std::string log = "Iter 10: Train loss 2.0, Learning Rate 1e-5, It/sec 2.0, Tokens/sec 10\n";
  log += std::string("\x01\x00\x02\xff junk", 10) + "\n";
  log += "Iter 20: Train loss 1.9, Learning Rate 1e-5, It/sec 2.0, Tokens/sec 10\n";
  const auto s = parse_log_text(log, ParseOptions{});
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->steps.size(), 2u);
  EXPECT_EQ(s->notes.binary_lines, 1u);
  EXPECT_FALSE(describe_notes(s->notes).empty());
}

TEST(BadInput, FiftyMegabyteLineIsReadInPieces) {
  std::string log = "Iter 10: Train loss 2.0, Learning Rate 1e-5, It/sec 2.0, Tokens/sec 10\n";
  log += std::string(50u << 20, 'x') + "\n";
  log += "Iter 20: Train loss 1.9, Learning Rate 1e-5, It/sec 2.0, Tokens/sec 10\n";
  test::TempDir dir;
  test::write_text(dir / "big.log", log);
  const auto s = parse_log_file(dir / "big.log", ParseOptions{});
  ASSERT_TRUE(s.has_value()) << s.error().detail;
  EXPECT_EQ(s->steps.size(), 2u);
  EXPECT_EQ(s->notes.overlong_lines, 1u);
}

TEST(BadInput, MixedFormatsPickTheMajorityAndSayWhatWasIgnored) {
  std::string log;
  for (int i = 1; i <= 5; ++i) {
    log +=
        " iteration " + std::to_string(i) + "/ 100 | elapsed time per iteration (ms): 1000.0 |\n";
  }
  log += "Iter 10: Train loss 2.0, Learning Rate 1e-5, It/sec 2.0, Tokens/sec 10\n";
  const auto s = parse_log_text(log, ParseOptions{});
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->format, LogFormat::megatron);
  EXPECT_EQ(s->steps.size(), 5u);
  EXPECT_EQ(s->notes.other_format, LogFormat::mlx_lm);
  EXPECT_EQ(s->notes.other_format_lines, 1u);
}

TEST(BadInput, TimestampsGoingBackwardsAreDroppedAndCounted) {
  const std::string log =
      "[2023-08-02 00:41:17,936] [INFO] [timer.py:215:stop] epoch=0/micro_step=10/global_step=10, "
      "CurrSamplesPerSec=200\n"
      "[2023-08-02 00:41:18,677] [INFO] [timer.py:215:stop] epoch=0/micro_step=20/global_step=20, "
      "CurrSamplesPerSec=200\n"
      "[2023-08-02 00:40:00,000] [INFO] [timer.py:215:stop] epoch=0/micro_step=30/global_step=30, "
      "CurrSamplesPerSec=200\n";
  const auto s = parse_log_text(log, ParseOptions{});
  ASSERT_TRUE(s.has_value());
  ASSERT_EQ(s->steps.size(), 3u);
  EXPECT_FALSE(s->steps[2].time);
  EXPECT_FALSE(s->steps[2].seconds);
  EXPECT_EQ(s->notes.backwards_times, 1u);
}

TEST(BadInput, SeriesLongerThanTheCapIsDownsampled) {
  std::string log;
  for (int i = 1; i <= 100; ++i) {
    log += "Iter " + std::to_string(i) +
           ": Train loss 2.0, Learning Rate 1e-5, It/sec 2.0, Tokens/sec 10\n";
  }
  ParseOptions po;
  po.max_steps = 16;
  const auto s = parse_log_text(log, po);
  ASSERT_TRUE(s.has_value());
  EXPECT_LT(s->steps.size(), 16u);
  EXPECT_GT(s->notes.downsample_stride, 1u);
  EXPECT_EQ(s->steps.back().step, 100);
  EXPECT_EQ(*median_seconds(*s), 0.5);
}

}  // namespace
}  // namespace sparkops::trainlog
