// RecordReader against a plain reference split, across buffer refills, and the fast number paths
// against the general parse they stand in for.

#include <bit>
#include <cstdint>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/text.hpp"
#include "support/test_support.hpp"
#include "trainlog/log_text.hpp"
#include "trainlog/record_reader.hpp"

namespace sparkops::trainlog {
namespace {

struct Piece {
  std::string text;
  std::uint64_t offset = 0;
};

// The contract, written the slow way: records end at '\r' or '\n', empty ones are skipped, a
// record longer than `max` comes in pieces of `max` bytes.
std::vector<Piece> reference_split(const std::string& s, std::size_t max) {
  std::vector<Piece> out;
  std::size_t b = 0;
  while (b < s.size()) {
    std::size_t e = b;
    while (e < s.size() && s[e] != '\r' && s[e] != '\n') ++e;
    for (std::size_t p = b; p < e; p += max) out.push_back({s.substr(p, std::min(max, e - p)), p});
    b = e + 1;
  }
  return out;
}

std::vector<Piece> read_all(RecordReader& r) {
  std::vector<Piece> out;
  LogLine line;
  while (r.next(line)) out.push_back({std::string(line.text), line.offset});
  return out;
}

// Bars redrawn after '\r' many times per '\n', runs of bare bars with no '\n' at all, "\r\n",
// empty records and the odd long line.
std::string mixed_log(std::size_t bytes, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s;
  while (s.size() < bytes) {
    const auto kind = static_cast<unsigned>(rng() % 10);
    const std::size_t len = kind == 0 ? rng() % 5000 : rng() % 90;
    s.append(len, static_cast<char>('a' + rng() % 26));
    const auto sep = static_cast<unsigned>(rng() % 8);
    s += sep < 5 ? "\r" : sep < 6 ? "\n" : sep < 7 ? "\r\n" : "\n\n";
  }
  return s;
}

TEST(RecordReader, FileMatchesTheReferenceSplitAcrossRefills) {
  const test::TempDir dir;
  const std::string log = mixed_log(std::size_t{5} << 20, 7);  // several 1 MiB refills
  const auto path = dir / "mixed.log";
  std::ofstream(path, std::ios::binary) << log;
  for (const std::size_t max : {std::size_t{0}, std::size_t{4096}, std::size_t{100}}) {
    auto r = RecordReader::open_file(path, max);
    ASSERT_TRUE(r.has_value());
    const auto got = read_all(*r);
    const auto want = reference_split(log, max == 0 ? RecordReader::kDefaultMaxRecord : max);
    ASSERT_EQ(got.size(), want.size()) << "max " << max;
    for (std::size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i].text, want[i].text) << "record " << i << ", max " << max;
      ASSERT_EQ(got[i].offset, want[i].offset) << "record " << i << ", max " << max;
    }
    EXPECT_EQ(r->bytes_read(), log.size());
  }
}

TEST(RecordReader, BareBarsWithNoNewlineAreEachARecord) {
  std::string log;
  for (int i = 0; i < 20000; ++i)
    log += "\r 1%|  | " + std::to_string(i) + "/9 [00:01<00:02, 1.0s/it]";
  auto r = RecordReader::from_text(log);
  const auto got = read_all(r);
  ASSERT_EQ(got.size(), 20000u);
  EXPECT_EQ(got.back().text, " 1%|  | 19999/9 [00:01<00:02, 1.0s/it]");
}

TEST(LogText, ParseDecimalAgreesWithParseDouble) {
  std::mt19937_64 rng(11);
  std::vector<std::string> cases = {"0",
                                    "0.0",
                                    "21.36",
                                    "0.0002",
                                    "613",
                                    " 4.50 ",
                                    "1.",
                                    ".5",
                                    "+1.5",
                                    "-2.25",
                                    "1e-5",
                                    "1.5e3",
                                    "inf",
                                    "nan",
                                    "",
                                    "1.2.3",
                                    "12a",
                                    "007.10",
                                    "999999999999999",
                                    "9999999999999999",
                                    "123456789.123456",
                                    "0.000000000000001"};
  for (int i = 0; i < 20000; ++i) {
    const int digits = 1 + static_cast<int>(rng() % 17);
    std::string s;
    for (int d = 0; d < digits; ++d) s += static_cast<char>('0' + rng() % 10);
    if (rng() % 4) s.insert(rng() % s.size(), ".");
    cases.push_back(s);
  }
  for (const auto& s : cases) {
    const auto fast = parse_decimal(s);
    const auto general = parse_double(s);
    ASSERT_EQ(fast.has_value(), general.has_value()) << '"' << s << '"';
    if (fast) {
      // Bit for bit (both correctly rounded; a NaN compares unequal to itself as a double).
      EXPECT_EQ(std::bit_cast<std::uint64_t>(*fast), std::bit_cast<std::uint64_t>(*general))
          << '"' << s << '"';
    }
  }
}

TEST(LogText, ClockSecondsOfWholeFieldsAndTheGeneralForms) {
  EXPECT_EQ(parse_clock_seconds("04:24"), 264.0);
  EXPECT_EQ(parse_clock_seconds(" 2:48:45 "), 10125.0);
  EXPECT_EQ(parse_clock_seconds("100:30:01"), 361801.0);
  EXPECT_EQ(parse_clock_seconds("1 day, 0:08:23"), 86903.0);
  EXPECT_EQ(parse_clock_seconds("00:01.5"), 1.5);
  EXPECT_FALSE(parse_clock_seconds("12"));
  EXPECT_FALSE(parse_clock_seconds("1:2:3:4"));
  EXPECT_FALSE(parse_clock_seconds("1::2"));
  EXPECT_FALSE(parse_clock_seconds("12:"));
  EXPECT_FALSE(parse_clock_seconds("?"));
  EXPECT_EQ(parse_clock_seconds("1234567890:00"), 74074073400.0);  // past the whole-field path
}

}  // namespace
}  // namespace sparkops::trainlog
