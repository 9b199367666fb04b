#include "tui/frame_builder.hpp"

#include <gtest/gtest.h>

#include "model_fixture.hpp"
#include "support/test_support.hpp"

namespace sparkops::tui {
namespace {

std::string render(const TopModel& m, const ViewState& v, std::size_t cols, std::size_t rows,
                   Glyphs g = Glyphs::unicode, FrameMode mode = FrameMode::interactive) {
  FrameOptions o;
  o.columns = cols;
  o.rows = rows;
  o.glyphs = g;
  o.mode = mode;
  return frame_to_text(build_frame(m, v, o));
}

bool contains(const std::string& s, std::string_view needle) {
  return s.find(needle) != std::string::npos;
}

void expect_fits(const Frame& f, std::size_t cols, std::size_t rows) {
  EXPECT_LE(f.size(), rows);
  for (const auto& line : f) EXPECT_LE(line.width(), cols);
}

TEST(FrameBuilder, Busy80x24Golden) {
  const auto text = render(test::busy_gb10_model(), ViewState{}, 80, 24);
  sparkops::test::expect_golden("golden/top/busy_80x24.txt", text);
}

TEST(FrameBuilder, Busy160x48Golden) {
  const auto text = render(test::busy_gb10_model(), ViewState{}, 160, 48);
  sparkops::test::expect_golden("golden/top/busy_160x48.txt", text);
}

TEST(FrameBuilder, Busy80x24AsciiGolden) {
  const auto text = render(test::busy_gb10_model(), ViewState{}, 80, 24, Glyphs::ascii);
  sparkops::test::expect_golden("golden/top/busy_80x24_ascii.txt", text);
  for (const char c : text) EXPECT_LT(static_cast<unsigned char>(c), 0x80U);
}

TEST(FrameBuilder, QuietWithoutGpu80x24Golden) {
  const auto text = render(test::quiet_model_without_gpu(), ViewState{}, 80, 24);
  sparkops::test::expect_golden("golden/top/quiet_80x24.txt", text);
}

TEST(FrameBuilder, EveryLineFitsAndFrameFillsTheScreen) {
  const auto m = test::busy_gb10_model();
  for (const auto& [cols, rows] :
       {std::pair<std::size_t, std::size_t>{80, 24}, {100, 30}, {160, 48}, {200, 60}, {40, 10}}) {
    FrameOptions o;
    o.columns = cols;
    o.rows = rows;
    const Frame f = build_frame(m, ViewState{}, o);
    expect_fits(f, cols, rows);
    EXPECT_EQ(f.size(), rows) << cols << "x" << rows;  // key line on the last row
  }
}

TEST(FrameBuilder, ShowsTheFiguresAndVerdicts) {
  const auto text = render(test::busy_gb10_model(), ViewState{}, 80, 24);
  EXPECT_TRUE(contains(text, "total 119.5"));
  EXPECT_TRUE(contains(text, "budget 27.0"));
  EXPECT_TRUE(contains(text, "83°C"));
  EXPECT_TRUE(contains(text, "97.4 W of ~100"));
  EXPECT_TRUE(contains(text, "pwr_cap +0.82s"));
  EXPECT_TRUE(contains(text, "hidden (bits clear)"));
  EXPECT_TRUE(contains(text, "platform_cap"));
  EXPECT_TRUE(contains(text, "PROCHOT no"));
  EXPECT_TRUE(contains(text, "OOM kills 1"));
  EXPECT_TRUE(contains(text, "orphan"));
  EXPECT_TRUE(contains(text, "one heavy job at a time: stop PID 6100"));
}

TEST(FrameBuilder, LargerTerminalShowsMoreDetail) {
  const auto m = test::busy_gb10_model();
  const auto small = render(m, ViewState{}, 80, 24);
  const auto large = render(m, ViewState{}, 160, 48);
  EXPECT_FALSE(contains(small, "soc_pkg"));
  EXPECT_TRUE(contains(large, "soc_pkg"));
  EXPECT_TRUE(contains(large, "gpu-memory-utilization 0.5"));
  EXPECT_TRUE(contains(large, "major faults 1207"));
  EXPECT_TRUE(contains(large, "platform cap: power flat at the ~100 W ceiling"));
}

TEST(FrameBuilder, SortOrdersTheTable) {
  const auto m = test::busy_gb10_model();
  ViewState v;
  auto order = [&](SortKey k) {
    v.sort = k;
    const auto text = render(m, v, 80, 24);
    return std::vector<std::size_t>{text.find(" 114687 "), text.find(" 4174 "),
                                    text.find(" 6100 ")};
  };
  auto mem = order(SortKey::memory);  // 58, 31, 4 GiB
  EXPECT_LT(mem[0], mem[1]);
  EXPECT_LT(mem[1], mem[2]);
  auto cap = order(SortKey::cap);  // capped vLLM first
  EXPECT_LT(cap[1], cap[0]);
  auto age = order(SortKey::age);  // orphan 2 days, vLLM 26 h, trainer 3 h
  EXPECT_LT(age[2], age[1]);
  EXPECT_LT(age[1], age[0]);
}

TEST(FrameBuilder, HelpReplacesTheBodyAndPromptShowsAtTheBottom) {
  const auto m = test::busy_gb10_model();
  ViewState v;
  v.help = true;
  EXPECT_TRUE(contains(render(m, v, 80, 24), "KEYS"));
  v.help = false;
  v.confirm_pid = 4174;
  const Frame f = build_frame(m, v, FrameOptions{});
  std::string last;
  for (const auto& s : f.back().spans) last += s.text;
  EXPECT_NE(last.find("Send SIGTERM to PID 4174?"), std::string::npos);
}

TEST(FrameBuilder, OnceModeHasNoKeyLineAndNoPadding) {
  const auto text = render(test::quiet_model_without_gpu(), ViewState{}, 80, 1000, Glyphs::unicode,
                           FrameMode::once);
  EXPECT_FALSE(contains(text, "q quit  ? help  m c a"));
  EXPECT_LT(std::count(text.begin(), text.end(), '\n'), 30);
  EXPECT_TRUE(contains(text, "no_library (none)"));
}

TEST(FrameBuilder, MachineTextCannotInjectEscapes) {
  auto m = test::busy_gb10_model();
  (*m.report.workloads)[0].name = "evil\x1b[2Jname\xc3\xa9";
  m.report.system.hostname = "host\nname";
  const auto text = render(m, ViewState{}, 160, 48);
  EXPECT_FALSE(contains(text, "\x1b"));
  EXPECT_TRUE(contains(text, "evil?[2Jname?"));
  EXPECT_TRUE(contains(text, "host?name"));
}

TEST(FrameBuilder, StylesFollowThresholds) {
  const auto m = test::busy_gb10_model();
  const Frame f = build_frame(m, ViewState{}, FrameOptions{});
  auto style_of = [&](std::string_view text) {
    for (const auto& line : f)
      for (const auto& s : line.spans)
        if (s.text == text) return s.style;
    ADD_FAILURE() << "no span " << text;
    return Style::plain;
  };
  EXPECT_EQ(style_of("83°C"), Style::bad);     // >= thermal hot_celsius (80)
  EXPECT_EQ(style_of("97.4"), Style::warn);    // within the band of the ~100 W ceiling
  EXPECT_EQ(style_of("12.5%"), Style::warn);   // PSI some >= 10 %
  EXPECT_EQ(style_of("+0.82s"), Style::warn);  // a counter advanced
  EXPECT_EQ(style_of("1"), Style::bad);        // an OOM kill since start
}

}  // namespace
}  // namespace sparkops::tui
