// The plan's tables fit the terminal (base/table.hpp, COLUMNS honoured): `plan --list` elides the
// repo and leaves out low-priority columns, saying so; the fit matrix wraps its batch columns into
// blocks, so no figure is cut or lost. Without COLUMNS (a pipe) the natural widths stay.

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/table.hpp"
#include "base/text.hpp"
#include "support/test_support.hpp"

namespace sparkops {
namespace {

std::map<std::string, std::string> columns(std::size_t n) {
  return {{"COLUMNS", std::to_string(n)}};
}

// The matrix's header lines: one per block of batch columns.
std::size_t blocks(const std::string& text) {
  std::size_t n = 0;
  for (const auto line : split_lines(text))
    if (starts_with(trim(line), "seq ")) ++n;
  return n;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(PlanTableWidth, CatalogueFitsSixtyEightyAndTwoHundredColumns) {
  const auto natural = test::run_sparkops({"plan", "--list"});
  ASSERT_EQ(natural.exit_code, 0) << natural.err;
  std::size_t natural_width = 0;
  for (const auto line : split_lines(natural.out))
    natural_width = std::max(natural_width, display_width(line));
  ASSERT_GT(natural_width, 80u);  // the case this guards: the listing is wider than a terminal
  const std::size_t rows = split_lines(natural.out).size();
  for (const std::size_t width : {60u, 80u, 200u}) {
    const auto r = test::run_sparkops({"plan", "--list"}, columns(width));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string note = "(left out to fit " + std::to_string(width) + " columns";
    for (const auto line : split_lines(r.out)) {
      if (starts_with(line, note)) continue;  // the note says what it says
      EXPECT_LE(display_width(line), width) << width << ": " << line;
    }
    EXPECT_NE(r.out.find("Llama-3.1-8B"), std::string::npos) << r.out;
    if (width >= natural_width) {
      EXPECT_EQ(r.out, natural.out);
      continue;
    }
    // Narrower: the repo loses its middle first, then columns go, and the table says which.
    EXPECT_NE(r.out.find("..."), std::string::npos) << r.out;
    const bool left_out = r.out.find(note) != std::string::npos;
    EXPECT_EQ(split_lines(r.out).size(), rows + (left_out ? 1 : 0)) << r.out;
    if (width == 60) {
      EXPECT_TRUE(left_out) << r.out;
    }
  }
}

TEST(PlanTableWidth, FitMatrixWrapsItsBatchColumns) {
  const std::vector<std::string> args{"plan",    "--params",      "7B",    "--method", "qlora",
                                      "--batch", "1,2,4,8,16,32", "--seq", "512,1024", "--budget",
                                      "100"};
  const auto natural = test::run_sparkops(args);
  ASSERT_EQ(natural.exit_code, 0) << natural.err;
  // A cell is "<size> GiB <verdict>" (every run here fits); the note lines below the table may
  // quote sizes too, so the cells are counted by their verdict.
  EXPECT_EQ(count(natural.out, " GiB fits"), 12u) << natural.out;
  EXPECT_EQ(blocks(natural.out), 1u) << natural.out;
  for (const std::size_t width : {60u, 80u, 200u}) {
    const auto r = test::run_sparkops(args, columns(width));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // Every cell and every batch, whatever the width.
    EXPECT_EQ(count(r.out, " GiB fits"), 12u) << width << "\n" << r.out;
    for (const char* b : {"batch 1 ", "batch 2 ", "batch 32"})
      EXPECT_NE(r.out.find(b), std::string::npos) << width << "\n" << r.out;
    for (const auto line : split_lines(r.out)) {
      if (starts_with(line, "Model ") || starts_with(line, "Run ") ||
          starts_with(line, "Budget ") || starts_with(line, "(peak") || starts_with(line, "note: "))
        continue;  // the lines around the table say what they say
      EXPECT_LE(display_width(line), width) << width << ": " << line;
    }
    if (width >= 200) {
      EXPECT_EQ(r.out, natural.out);
    }
    if (width <= 80) {
      EXPECT_GT(blocks(r.out), 1u) << width << "\n" << r.out;
    }
  }
}

}  // namespace
}  // namespace sparkops
