// The tqdm redraw fast path: scan_tqdm_redraw must say "one update" only where scan_tqdm itself
// finds exactly that update, and the parser must give the same series whether a bar's records
// come as redraws of one prefix or each in a form the fast path does not take.

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "trainlog/parse_log.hpp"
#include "trainlog/tqdm_scan.hpp"

namespace sparkops::trainlog {
namespace {

// Text before n in bars drawn by HF/TRL, Lightning, torchtune, evaluation and data loops, and
// prefixes that are not a bar's at all (ending in '/', a digit's neighbour, a percent sign).
const std::vector<std::string> kPrefixes = {
    "",
    "  1%|          | ",
    " 45%|####5     | ",
    "Epoch 0:  10%|\xe2\x96\x88         | ",
    "1|45|Loss: 1.849762201309204:   0%|          | ",
    "Validation: ",
    "Map:  50%|#####     | ",
    "Total optimization steps = 12  3%|3 | ",
    "abc/",
    "12%|",
    "Epoch 1: ",
    " ",
};

// Pieces of what follows n: counters, clocks, rates, postfixes, brackets in odd places.
const std::vector<std::string> kPieces = {"/",
                                          "1",
                                          "23",
                                          "4567",
                                          "/100",
                                          "/1000000000",
                                          " ",
                                          " [",
                                          "[",
                                          "]",
                                          "<",
                                          ",",
                                          ":",
                                          "00:01",
                                          "1:02:03",
                                          "?",
                                          "s/it",
                                          "it/s",
                                          "21.5",
                                          "4.50",
                                          "1.2k",
                                          "it",
                                          ", ",
                                          "loss=2.1",
                                          "nan",
                                          "e5",
                                          "1 day, ",
                                          "v_num=0",
                                          "Total optimization steps = 7",
                                          "\t",
                                          "%|",
                                          "x"};

std::string random_tail(std::mt19937& rng) {
  std::string t = std::to_string(rng() % 5000);  // a redraw's rest starts with n's digits
  const std::size_t pieces = rng() % 12;
  for (std::size_t i = 0; i < pieces; ++i) t += kPieces[rng() % kPieces.size()];
  return t;
}

// Well-formed redraws, so the comparison covers the accepted case often, not only refusals.
std::string bar_tail(std::mt19937& rng) {
  const auto n = rng() % 1000;
  std::string t = std::to_string(n);
  if (rng() % 4 != 0) t += "/" + std::to_string(n + rng() % 1000);
  if (rng() % 2 != 0) t += "it";
  t += " [" + std::to_string(rng() % 60) + ":" + std::to_string(10 + rng() % 50);
  if (rng() % 3 != 0) t += "<" + std::string(rng() % 2 ? "?" : "10:20:10");
  if (rng() % 5 != 0)
    t += ", " + std::to_string(rng() % 30) + "." + std::to_string(rng() % 100) +
         (rng() % 2 ? "s/it" : "it/s");
  if (rng() % 3 == 0) t += ", loss=" + std::to_string(rng() % 9);
  if (rng() % 7 == 0) t += ", Total optimization steps = 9";
  t += "]";
  if (rng() % 6 == 0) t += rng() % 2 ? " tail" : "  1%| | 2/9 [00:01<00:02, 1.00s/it]";
  return t;
}

TEST(TqdmRedraw, AcceptsOnlyWhatTheFullScanFindsAsTheOneUpdate) {
  std::mt19937 rng(11);
  std::vector<TqdmUpdate> full;
  std::size_t accepted = 0;
  for (int i = 0; i < 60000; ++i) {
    const std::string& prefix = kPrefixes[rng() % kPrefixes.size()];
    const std::string line = prefix + (i % 2 == 0 ? random_tail(rng) : bar_tail(rng));
    TqdmUpdate u;
    const bool fast = scan_tqdm_redraw(line, prefix.size(), u);
    scan_tqdm(line, full);
    if (!fast) continue;
    ++accepted;
    ASSERT_EQ(full.size(), 1u) << line;
    const TqdmUpdate& f = full.front();
    EXPECT_EQ(f.begin, 0u) << line;
    EXPECT_EQ(f.n_begin, prefix.size()) << line;
    EXPECT_EQ(f.end, line.size()) << line;
    EXPECT_EQ(u.n_begin, f.n_begin) << line;
    EXPECT_EQ(u.end, f.end) << line;
    EXPECT_EQ(u.n, f.n) << line;
    EXPECT_EQ(u.total, f.total) << line;
    EXPECT_EQ(u.elapsed_seconds, f.elapsed_seconds) << line;
    EXPECT_EQ(u.seconds_per_it, f.seconds_per_it) << line;
    EXPECT_EQ(u.rate_inverted, f.rate_inverted) << line;
    EXPECT_EQ(u.postfix, f.postfix) << line;
  }
  EXPECT_GT(accepted, 10000u);  // the well-formed half is mostly taken
}

TEST(TqdmRedraw, RefusesWhatScanTqdmReadsDifferently) {
  TqdmUpdate u;
  EXPECT_TRUE(scan_tqdm_redraw("  1%| | 5/100 [00:05<01:35,  1.00s/it]", 8, u));
  EXPECT_EQ(u.n, 5);
  EXPECT_EQ(u.total, 100);
  // Text after the bracket, a second update, a rest that does not start with n's digits, n
  // starting before the prefix's end, a rate in bytes, no bracket at all.
  EXPECT_FALSE(scan_tqdm_redraw("  1%| | 5/100 [00:05<01:35,  1.00s/it] x", 8, u));
  EXPECT_FALSE(scan_tqdm_redraw("  1%| | 5/100 [00:05, 1.00s/it] 6/100 [00:06, 1.00s/it]", 8, u));
  EXPECT_FALSE(scan_tqdm_redraw("  1%| | x5/100 [00:05<01:35,  1.00s/it]", 8, u));
  EXPECT_FALSE(scan_tqdm_redraw("  1%| | 15/100 [00:05<01:35,  1.00s/it]", 9, u));
  EXPECT_FALSE(scan_tqdm_redraw("  1%| | 5/100 [00:05<01:35, 1.00MB/s]", 8, u));
  EXPECT_FALSE(scan_tqdm_redraw("  1%| | 5/100", 8, u));
}

// The same bar as redraws after '\r' (the fast path) and as one update per '\n' record with a
// marker-free word after each ']' (every record parsed in full): the same steps and times.
TEST(TqdmRedraw, RedrawnBarGivesTheSeriesOfTheFullParse) {
  std::string redrawn = "***** Running training *****\n";
  std::string full = redrawn;
  for (int n = 1; n <= 400; ++n) {
    const std::string bar = "  1%|          | " + std::to_string(n) + "/400 [" +
                            std::to_string(n * 3 / 60) + ":" + (n * 3 % 60 < 10 ? "0" : "") +
                            std::to_string(n * 3 % 60) + "<10:00, " + std::to_string(3 + n % 2) +
                            ".00s/it]";
    redrawn += "\r" + bar;
    full += bar + " \n";
    if (n % 50 == 0) {
      const std::string dict = "\n{'loss': " + std::to_string(n) + ".5, 'epoch': 0.1}\n";
      redrawn += dict;
      full += dict;
    }
  }
  redrawn += "\n";
  ParseOptions po;
  const auto a = parse_log_text(redrawn, po);
  const auto b = parse_log_text(full, po);
  ASSERT_TRUE(a.has_value());
  ASSERT_TRUE(b.has_value());
  ASSERT_EQ(a->steps.size(), 400u);
  ASSERT_EQ(a->steps.size(), b->steps.size());
  for (std::size_t i = 0; i < a->steps.size(); ++i) {
    EXPECT_EQ(a->steps[i].step, b->steps[i].step);
    EXPECT_EQ(a->steps[i].seconds, b->steps[i].seconds);
    EXPECT_EQ(a->steps[i].source, b->steps[i].source);
    EXPECT_EQ(a->steps[i].loss, b->steps[i].loss);
    EXPECT_EQ(a->steps[i].elapsed_seconds, b->steps[i].elapsed_seconds);
  }
  EXPECT_EQ(a->total_steps, b->total_steps);
  EXPECT_EQ(a->unit, b->unit);
}

// A banner printed inside a redraw's postfix is still found (the search covers the redraw's rest).
TEST(TqdmRedraw, BannerInARedrawIsFound) {
  std::string log;
  for (int n = 1; n <= 40; ++n) {
    log += "\r  5%|5         | " + std::to_string(n) + "/9000 [00:" + (n < 10 ? "0" : "") +
           std::to_string(n) + "<10:00, 1.00s/it" +
           (n == 15 ? ", Total optimization steps = 400" : "") + "]";
  }
  for (int n = 1; n <= 30; ++n) {
    log += "\r  5%|5         | " + std::to_string(n) + "/400 [00:" + (n < 10 ? "0" : "") +
           std::to_string(n) + "<10:00, 1.00s/it]";
  }
  log += "\n";
  const auto s = parse_log_text(log, ParseOptions{});
  ASSERT_TRUE(s.has_value());
  // The banner's total picks the 400-step bar although the 9000 one advanced more often.
  EXPECT_EQ(s->total_steps, 400);
  EXPECT_EQ(s->steps.size(), 30u);
}

}  // namespace
}  // namespace sparkops::trainlog
