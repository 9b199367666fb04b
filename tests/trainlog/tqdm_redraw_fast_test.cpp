// The one-pass redraw reader (scan_tqdm_redraw_fast) against the full scan, over redraws generated
// the way tqdm's format_meter prints them (widths, units, "?" rates, H:MM:SS clocks, unit_scale
// suffixes, postfix dicts, non-ASCII descriptions) and broken ways it does not (cut tails, bytes
// replaced by NUL, invalid UTF-8 or separators, huge numbers). Where the fast reader says yes, the
// full scan must find exactly that one update; and it must say yes for the plain shapes, or the
// comparison would prove nothing.

#include <bit>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "trainlog/parse_log.hpp"
#include "trainlog/tqdm_scan.hpp"

namespace sparkops::trainlog {
namespace {

struct Redraw {
  std::string line;
  std::size_t prefix_len = 0;
  bool plain = false;  // a shape the fast reader must take
};

std::string pick(std::mt19937& rng, const std::vector<std::string>& v) {
  return v[rng() % v.size()];
}

std::string two_digits(std::uint64_t v) {
  return (v < 10 ? "0" : "") + std::to_string(v);
}

// tqdm's format_interval: "MM:SS", or "H:MM:SS" from one hour on.
std::string clock(std::mt19937& rng) {
  const std::uint64_t h = rng() % 3 == 0 ? rng() % 1200 : 0;
  const std::uint64_t m = rng() % 60, s = rng() % 60;
  return h ? std::to_string(h) + ":" + two_digits(m) + ":" + two_digits(s)
           : two_digits(m) + ":" + two_digits(s);
}

// A number as '{0:5.2f}' or format_sizeof prints it ("  1.00", "21.36", "123", "1.23k").
std::string rate_number(std::mt19937& rng, bool& plain) {
  switch (rng() % 6) {
    case 0:
      return " " + std::to_string(rng() % 10) + "." + two_digits(rng() % 100);
    case 1:
      return std::to_string(rng() % 100) + "." + two_digits(rng() % 100);
    case 2:
      return std::to_string(rng() % 1000);
    case 3:
      return std::to_string(rng() % 10) + "." + std::to_string(rng() % 10);
    case 4:
      return "0.00";
    default:
      plain = false;
      return pick(rng, {"nan", "inf", "1e3", "5.", ".5", "1234567890123456.5", "-1.00", "+2.00",
                        "\t1.00", "1..2", "1.2.3", ""});
  }
}

std::string rate(std::mt19937& rng, bool has_total, bool& plain) {
  switch (rng() % 8) {
    case 0:
      return "?it/s";
    case 1:
      return rng() % 2 ? "?s/it" : "?kit/s";
    case 2:
      return rate_number(rng, plain) + (rng() % 2 ? "kit/s" : "Mit/s");
    case 3:
      plain = false;
      return rate_number(rng, plain) + pick(rng, {"Git/s", "ks/it", "B/s", "MB/s", "examples/s",
                                                  "it/ s", "s/it "});
    case 4:
      if (has_total) {
        plain = false;  // NeMo's bar_format: the postfix where the rate would be
        return "v_num=0, reduced_train_loss=2.1";
      }
      [[fallthrough]];
    default:
      return rate_number(rng, plain) + (rng() % 2 ? "s/it" : "it/s");
  }
}

std::string postfix(std::mt19937& rng, bool& plain) {
  switch (rng() % 6) {
    case 0:
      return ", loss=" + std::to_string(rng() % 9) + ".5" + ", lr=1e-4";
    case 1:
      return ", \xe6\x8d\x9f\xe5\xa4\xb1=1.2 ";  // non-ASCII key, trailing space
    case 2:
      plain = false;  // a ']' inside: the first one ends the update
      return ", best=[1, 2]";
    case 3:
      return ", Total optimization steps = 9";
    default:
      return "";
  }
}

Redraw tqdm_redraw(std::mt19937& rng) {
  Redraw r;
  bool plain = true;
  const std::string desc =
      pick(rng, {"", "Epoch 0", "Training", "\xe8\xae\xad\xe7\xbb\x83", "1|45|Loss: 1.8497",
                 "Validation DataLoader 0", "abc/", "x\xff\xfe"});
  const bool has_total = rng() % 4 != 0;
  const std::uint64_t n = rng() % 3 == 0   ? rng()
                          : rng() % 5 == 0 ? rng() * rng() * (rng() % 3)  // up to 20 digits
                                           : rng() % 1000;
  if (has_total) {
    r.line = desc.empty() ? "" : desc + ": ";
    r.line += pick(rng, {"  1%", " 45%", "100%"}) + "|" +
              pick(rng, {"          ", "#####     ", "\xe2\x96\x88\xe2\x96\x8c  "}) + "| ";
  } else {
    r.line = desc.empty() ? "" : desc + ": ";
  }
  r.prefix_len = r.line.size();
  r.line += std::to_string(n);
  if (std::to_string(n).size() > 18) plain = false;  // 19 digits and more: the general parse
  if (has_total) {
    const std::string total = std::to_string(n + rng() % 100000);
    if (total.size() > 18) plain = false;
    r.line += "/" + total;
  } else {
    r.line += "it";
  }
  r.line += " [" + clock(rng);
  if (has_total) {
    r.line += "<" + (rng() % 5 == 0 ? std::string("?") : clock(rng));
  }
  if (has_total && rng() % 8 == 0) {
    r.line += "]";  // bar_format "[{elapsed}<{remaining}]"
  } else {
    r.line += ", " + rate(rng, has_total, plain) + postfix(rng, plain) + "]";
  }
  r.plain = plain;
  return r;
}

// What a log can do to a redraw that tqdm did not print.
void damage(std::mt19937& rng, Redraw& r) {
  switch (rng() % 9) {
    case 0:  // cut anywhere after the prefix (a torn last record)
      r.line.resize(r.prefix_len + rng() % (r.line.size() - r.prefix_len + 1));
      break;
    case 1:  // tqdm's padding when the line got shorter, or text after the bar
      r.line += rng() % 2 ? "   " : " tail";
      break;
    case 2:
    case 3: {  // one byte replaced
      const std::size_t at = r.prefix_len + rng() % (r.line.size() - r.prefix_len);
      r.line[at] = pick(rng, {std::string(1, '\0'), "\xff", "[", "]", ",", "<", ":", "/", " ", "9",
                              "?", "k", "\t"})[0];
      break;
    }
    case 4:  // huge numbers
      r.line.insert(r.prefix_len, rng() % 2 ? "99999999999999999999" : "1234567890123456");
      break;
    case 5:  // a second update in the same record (a lost '\r')
      r.line += "  2%| | 3/9 [00:01<00:02, 1.00s/it]";
      break;
    case 6:  // a prefix ending in a digit: n would start earlier
      r.line.insert(r.prefix_len, "7");
      break;
    default:
      break;
  }
}

void expect_same_as_full_scan(const std::string& line, std::size_t prefix_len,
                              const TqdmUpdate& u) {
  std::vector<TqdmUpdate> full;
  scan_tqdm(line, full);
  ASSERT_EQ(full.size(), 1u) << line;
  const TqdmUpdate& f = full.front();
  EXPECT_EQ(f.begin, 0u) << line;
  EXPECT_EQ(f.n_begin, prefix_len) << line;
  EXPECT_EQ(f.end, line.size()) << line;
  EXPECT_EQ(u.n_begin, f.n_begin) << line;
  EXPECT_EQ(u.end, f.end) << line;
  EXPECT_EQ(u.n, f.n) << line;
  EXPECT_EQ(u.total, f.total) << line;
  EXPECT_EQ(u.elapsed_seconds, f.elapsed_seconds) << line;
  EXPECT_EQ(u.seconds_per_it.has_value(), f.seconds_per_it.has_value()) << line;
  if (u.seconds_per_it && f.seconds_per_it) {
    // Bit for bit: the same operations on the same digits (the general parse reads "nan" too).
    EXPECT_EQ(std::bit_cast<std::uint64_t>(*u.seconds_per_it),
              std::bit_cast<std::uint64_t>(*f.seconds_per_it))
        << line;
  }
  EXPECT_EQ(u.rate_inverted, f.rate_inverted) << line;
  EXPECT_EQ(u.postfix, f.postfix) << line;
}

TEST(TqdmRedrawFast, PlainRedrawsAreReadAsTheFullScanReadsThem) {
  std::mt19937 rng(22);
  std::size_t plain = 0;
  for (int i = 0; i < 40000; ++i) {
    const Redraw r = tqdm_redraw(rng);
    TqdmUpdate u;
    const bool fast = scan_tqdm_redraw_fast(r.line, r.prefix_len, u);
    if (r.plain) {
      ++plain;
      EXPECT_TRUE(fast) << r.line;  // the shapes format_meter prints
    }
    if (fast) expect_same_as_full_scan(r.line, r.prefix_len, u);
    // The whole redraw reader (fast, else general) agrees with it wherever it says yes.
    TqdmUpdate g;
    if (scan_tqdm_redraw(r.line, r.prefix_len, g)) expect_same_as_full_scan(r.line, r.prefix_len, g);
  }
  EXPECT_GT(plain, 20000u);
}

TEST(TqdmRedrawFast, DamagedRedrawsAreRefusedOrReadAsTheFullScanReadsThem) {
  std::mt19937 rng(2222);
  std::size_t accepted = 0, refused = 0;
  for (int i = 0; i < 60000; ++i) {
    Redraw r = tqdm_redraw(rng);
    damage(rng, r);
    TqdmUpdate u;
    if (scan_tqdm_redraw_fast(r.line, r.prefix_len, u)) {
      ++accepted;
      expect_same_as_full_scan(r.line, r.prefix_len, u);
    } else {
      ++refused;
    }
  }
  EXPECT_GT(accepted, 10000u);
  EXPECT_GT(refused, 10000u);
}

TEST(TqdmRedrawFast, ReadsEachFieldOfTheDefaultBar) {
  TqdmUpdate u;
  ASSERT_TRUE(scan_tqdm_redraw_fast("  1%|          | 12/1000 [1:02:03<10:20:10, 21.36s/it]", 17, u));
  EXPECT_EQ(u.n, 12);
  EXPECT_EQ(u.total, 1000);
  EXPECT_EQ(u.elapsed_seconds, 3723);
  EXPECT_EQ(u.seconds_per_it, 21.36);
  EXPECT_FALSE(u.rate_inverted);
  ASSERT_TRUE(scan_tqdm_redraw_fast("Epoch 0: 7it [00:02,  4.00it/s, loss=2.1]", 9, u));
  EXPECT_EQ(u.n, 7);
  EXPECT_FALSE(u.total);
  EXPECT_EQ(u.seconds_per_it, 0.25);
  EXPECT_TRUE(u.rate_inverted);
  EXPECT_EQ(u.postfix, "loss=2.1");
  ASSERT_TRUE(scan_tqdm_redraw_fast("5/10 [00:01<?, ?it/s]", 0, u));
  EXPECT_FALSE(u.seconds_per_it);
  ASSERT_TRUE(scan_tqdm_redraw_fast("5/10 [00:01<00:02, 1.50kit/s]", 0, u));
  EXPECT_EQ(u.seconds_per_it, 1.0 / 1500.0);
  // Left to the general parse: a clock with days, a scaled s/it, exponents, a prefix ending in a
  // digit, anything after the ']'.
  EXPECT_FALSE(scan_tqdm_redraw_fast("5/10 [1 day, 0:00:01<00:02, 1.00s/it]", 0, u));
  EXPECT_FALSE(scan_tqdm_redraw_fast("5/10 [00:01<00:02, 1.2ks/it]", 0, u));
  EXPECT_FALSE(scan_tqdm_redraw_fast("5/10 [00:01<00:02, 1e3it/s]", 0, u));
  EXPECT_FALSE(scan_tqdm_redraw_fast("a15/100 [00:05<01:35,  1.00s/it]", 2, u));
  EXPECT_FALSE(scan_tqdm_redraw_fast("5/10 [00:01<00:02, 1.00s/it] ", 0, u));
}

// A whole log of generated bars as '\r' redraws (the fast path where it applies) and as one record
// per update followed by a space (every record parsed by the full scan), with metric dicts and
// evaluation bars between: the same series.
TEST(TqdmRedrawFast, RedrawnLogGivesTheSeriesOfTheFullParse) {
  std::mt19937 rng(7);
  for (int round = 0; round < 20; ++round) {
    std::string redrawn = "***** Running training *****\n";
    std::string full = redrawn;
    const std::string desc = round % 3 == 0 ? "" : round % 3 == 1 ? "Epoch 0: " : "\xe8\xae\xad: ";
    const int total = 300 + round;
    int elapsed = 0;
    for (int n = 1; n <= total; ++n) {
      elapsed += static_cast<int>(rng() % 40);
      const auto h = static_cast<std::uint64_t>(elapsed / 3600);
      const std::string clock_text =
          (h ? std::to_string(h) + ":" : "") +
          two_digits(static_cast<std::uint64_t>(elapsed / 60 % 60)) + ":" +
          two_digits(static_cast<std::uint64_t>(elapsed % 60));
      const std::string rate_text =
          rng() % 9 == 0 ? "?it/s"
          : rng() % 2    ? std::to_string(1 + rng() % 30) + "." + two_digits(rng() % 100) + "s/it"
                         : std::to_string(rng() % 10) + "." + two_digits(rng() % 100) + "it/s";
      const std::string post = rng() % 3 == 0 ? ", loss=" + std::to_string(rng() % 5) + ".25" : "";
      const std::string bar = desc + " 10%|#         | " + std::to_string(n) + "/" +
                              std::to_string(total) + " [" + clock_text + "<00:10, " + rate_text +
                              post + "]";
      redrawn += "\r" + bar;
      full += bar + " \n";
      if (rng() % 10 == 0) {
        const std::string dict = "\n{'loss': " + std::to_string(n) + ".5, 'epoch': 0.1}\n";
        redrawn += dict;
        full += dict;
      }
      if (n % 97 == 0) {
        const std::string eval = "\rEvaluating: 50%|#####     | 1/2 [00:01<00:01, 1.00it/s]";
        redrawn += eval + "\n";
        full += eval + " \n";
      }
    }
    redrawn += "\n";
    const auto a = parse_log_text(redrawn, ParseOptions{});
    const auto b = parse_log_text(full, ParseOptions{});
    ASSERT_TRUE(a.has_value());
    ASSERT_TRUE(b.has_value());
    ASSERT_EQ(a->steps.size(), static_cast<std::size_t>(total));
    ASSERT_EQ(a->steps.size(), b->steps.size());
    for (std::size_t i = 0; i < a->steps.size(); ++i) {
      EXPECT_EQ(a->steps[i].step, b->steps[i].step);
      EXPECT_EQ(a->steps[i].seconds, b->steps[i].seconds);
      EXPECT_EQ(a->steps[i].source, b->steps[i].source);
      EXPECT_EQ(a->steps[i].loss, b->steps[i].loss);
      EXPECT_EQ(a->steps[i].elapsed_seconds, b->steps[i].elapsed_seconds);
    }
    ASSERT_EQ(a->markers.size(), b->markers.size());
    for (std::size_t i = 0; i < a->markers.size(); ++i) {
      EXPECT_EQ(a->markers[i].kind, b->markers[i].kind);
      EXPECT_EQ(a->markers[i].step, b->markers[i].step);
    }
    EXPECT_EQ(a->unit, b->unit);
  }
}

}  // namespace
}  // namespace sparkops::trainlog
