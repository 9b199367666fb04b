// Tables fit the terminal: the one layout (base/table.hpp) and the commands that use it, honouring
// COLUMNS, with goldens at 80 and 200 columns.

#include <gtest/gtest.h>

#include "base/table.hpp"
#include "base/text.hpp"
#include "support/test_support.hpp"

namespace sparkops {
namespace {

std::size_t widest_line(const std::string& text) {
  std::size_t widest = 0;
  for (const auto line : split_lines(text)) widest = std::max(widest, display_width(line));
  return widest;
}

Table sample_table() {
  Table t({{"PID"},
           {"NAME", Align::left, 0, true, 10},
           {"SIZE", Align::right},
           {"DETAIL", Align::left, 2},
           {"AGE", Align::right, 1}});
  t.add_row({"1", "python -m vllm.entrypoints.openai.api_server --port 8000", "1.0 GiB",
             "a long explanation of the size", "3d"});
  t.add_row({"22", "ollama", "12.0 GiB", "capped", "5m"});
  return t;
}

TEST(TableLayout, NaturalWidthsWithoutALimit) {
  const Table t = sample_table();
  const std::string out = t.render(std::nullopt);
  EXPECT_NE(out.find("python -m vllm.entrypoints.openai.api_server --port 8000"),
            std::string::npos);
  EXPECT_TRUE(t.left_out().empty());
  // Right-aligned numbers line up; no trailing spaces.
  EXPECT_NE(out.find(" 1.0 GiB "), std::string::npos) << out;
  for (const auto line : split_lines(out)) EXPECT_NE(line.back(), ' ') << line;
}

TEST(TableLayout, ElidesTheMiddleBeforeLeavingColumnsOut) {
  const Table t = sample_table();
  const std::string out = t.render(75);
  EXPECT_LE(widest_line(out), 75u) << out;
  EXPECT_TRUE(t.left_out().empty()) << out;
  // The start and the end of the command line stay.
  EXPECT_NE(out.find("python -m "), std::string::npos) << out;
  EXPECT_NE(out.find("..."), std::string::npos) << out;
  EXPECT_NE(out.find("--port 8000"), std::string::npos) << out;
}

TEST(TableLayout, LeavesOutTheHighestRankFirstAndSaysSo) {
  const Table t = sample_table();
  const std::string out = t.render(27);
  EXPECT_LE(widest_line(out), 27u) << out;
  EXPECT_EQ(t.left_out(), (std::vector<std::string>{"DETAIL", "AGE"}));
  EXPECT_EQ(out.find("DETAIL"), std::string::npos);
  EXPECT_NE(out.find("ollama"), std::string::npos);
  EXPECT_EQ(left_out_note(t.left_out(), 27),
            "(left out to fit 27 columns: DETAIL, AGE; --json has every field)");
}

TEST(TableLayout, NeverCutsBelowTheMinimumWidth) {
  const Table t = sample_table();
  const std::string out = t.render(10);
  // PID, NAME (10) and SIZE are never left out: the lines overflow rather than lose the name.
  EXPECT_NE(out.find("ollama"), std::string::npos) << out;
  EXPECT_NE(out.find("12.0 GiB"), std::string::npos) << out;
}

TEST(TableLayout, MinimumGapSpacesAGrid) {
  Table grid({{"seq", Align::right}, {"batch 1", Align::right}, {"batch 2", Align::right}}, "", 2);
  grid.add_row({"1024", "21.7 GiB fits", "36.7 GiB tight"});
  EXPECT_EQ(grid.render(std::nullopt),
            " seq        batch 1         batch 2\n1024  21.7 GiB fits  36.7 GiB tight\n");
  Table plain({{"seq", Align::right}, {"batch 1", Align::right}});
  plain.add_row({"1024", "21.7 GiB fits"});
  EXPECT_EQ(plain.render(std::nullopt), " seq       batch 1\n1024 21.7 GiB fits\n");
}

TEST(TableLayout, ElideMiddleKeepsUtf8WellFormed) {
  const std::string s =
      "\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9";  // 8 x é
  const std::string cut = elide_middle(s, 7);
  EXPECT_EQ(cut, "\xC3\xA9\xC3\xA9...\xC3\xA9\xC3\xA9");
  EXPECT_EQ(display_width(cut), 7u);
  EXPECT_EQ(elide_middle("short", 10), "short");
}

std::string procs_root(const std::string& scenario) {
  return test::fixture("procs/" + scenario).string();
}

test::ProcessResult procs_at(const std::string& scenario, const std::string& columns) {
  return test::run_sparkops({"--root", procs_root(scenario), "procs", "--gpu-apps",
                             procs_root(scenario) + "/gpu-apps.csv"},
                            {{"COLUMNS", columns}});
}

// procs was 170 columns wide and cut names at 34 characters: at 80 columns the table fits, the
// kind and cap keep their start and end, and what was left out is named.
TEST(TableWidth, ProcsAt80And200Columns) {
  for (const std::string scenario : {"vllm_uncapped_orphan", "vllm_capped_lora"}) {
    const auto narrow = procs_at(scenario, "80");
    EXPECT_LT(narrow.exit_code, 2) << narrow.err;
    test::expect_golden("golden/procs/" + scenario + "_cols80.txt", narrow.out);
    const auto table_end = narrow.out.find("PSS falls back");
    ASSERT_NE(table_end, std::string::npos) << narrow.out;
    EXPECT_LE(widest_line(narrow.out.substr(0, table_end)), 80u) << narrow.out;
    const auto wide = procs_at(scenario, "200");
    test::expect_golden("golden/procs/" + scenario + "_cols200.txt", wide.out);
    EXPECT_EQ(wide.out.find("left out to fit"), std::string::npos) << wide.out;
  }
}

TEST(TableWidth, JunkColumnsIsIgnored) {
  const auto junk = procs_at("vllm_uncapped_orphan", "lots");
  const auto none =
      test::run_sparkops({"--root", procs_root("vllm_uncapped_orphan"), "procs", "--gpu-apps",
                          procs_root("vllm_uncapped_orphan") + "/gpu-apps.csv"});
  EXPECT_EQ(junk.out, none.out);
}

TEST(TableWidth, StatusWorkloadsFit80Columns) {
  const auto r =
      test::run_sparkops({"--root", procs_root("vllm_uncapped_orphan"), "status", "--gpu", "none"},
                         {{"COLUMNS", "80"}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto start = r.out.find("WORKLOADS");
  ASSERT_NE(start, std::string::npos) << r.out;
  bool header = false;
  std::size_t rows = 0;
  const std::string section = r.out.substr(start);  // the lines below view it
  for (const auto line : split_lines(section)) {
    const auto t = trim(line);
    if (starts_with(t, "PID ")) header = true;
    if (!header || !(starts_with(t, "PID ") || (!t.empty() && t[0] >= '0' && t[0] <= '9')))
      continue;
    ++rows;
    EXPECT_LE(display_width(line), 80u) << line;
  }
  EXPECT_EQ(rows, 3u) << r.out;  // the header and two workloads
}

}  // namespace
}  // namespace sparkops
