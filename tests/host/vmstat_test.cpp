#include "host/vmstat.hpp"

#include <random>
#include <string>

#include <gtest/gtest.h>

#include "base/text.hpp"
#include "host/proc_text.hpp"
#include "support/test_support.hpp"

namespace sparkops::host {

// Excerpt of /proc/vmstat on a 6.8 kernel.
constexpr std::string_view kModern =
    "nr_free_pages 1310720\n"
    "workingset_refault_anon 1287\n"
    "workingset_refault_file 2210468\n"
    "pswpin 1287\n"
    "pswpout 131072\n"
    "pgmajfault 412377\n"
    "pgsteal_kswapd 7981234\n"
    "pgsteal_direct 398765\n"
    "pgsteal_khugepaged 0\n"
    "pgscan_kswapd 8123456\n"
    "pgscan_direct 412345\n"
    "pgscan_khugepaged 0\n"
    "pgscan_direct_throttle 5\n"
    "pgscan_anon 262144\n"
    "pgscan_file 8273657\n"
    "pgsteal_anon 131072\n"
    "pgsteal_file 8248927\n"
    "oom_kill 2\n";

TEST(VmstatParse, ReadsCountersAndSumsReclaimersOnly) {
  const auto v = parse_vmstat(kModern);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->oom_kill, 2u);
  EXPECT_EQ(v->pgmajfault, 412377u);
  EXPECT_EQ(v->pswpout, 131072u);
  EXPECT_EQ(v->pgscan.at("anon"), 262144u);
  EXPECT_EQ(v->pgscan.at("direct_throttle"), 5u);
  // kswapd + direct + khugepaged; anon/file split the same pages, direct_throttle counts events.
  EXPECT_EQ(v->pgscan_total(), 8123456u + 412345u);
  EXPECT_EQ(v->pgsteal_total(), 7981234u + 398765u);
  EXPECT_EQ(v->workingset_refault_total(), 1287u + 2210468u);
  EXPECT_FALSE(v->workingset_refault.has_value());
}

TEST(VmstatParse, LegacyRefaultCounterAndPerZoneScans) {
  // 4.x kernels: one workingset_refault and per-zone pgscan keys.
  const auto v = parse_vmstat(
      "workingset_refault 5000\n"
      "pgscan_kswapd_normal 100\n"
      "pgscan_kswapd_movable 20\n"
      "pgscan_direct_normal 3\n");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->workingset_refault_total(), 5000u);
  EXPECT_EQ(v->pgscan_total(), 123u);
  EXPECT_FALSE(v->oom_kill.has_value());
  EXPECT_FALSE(v->pgsteal_total().has_value());
}

TEST(VmstatParse, MalformedKnownKeyNamesTheLine) {
  const auto v = parse_vmstat("nr_free_pages 1\noom_kill many\n");
  ASSERT_FALSE(v);
  EXPECT_EQ(v.error().code, Errc::malformed);
  EXPECT_NE(v.error().detail.find("/proc/vmstat line 2"), std::string::npos);
}

TEST(VmstatParse, UnknownKeysWithOddValuesAreIgnored) {
  const auto v = parse_vmstat("some_future_key x y\npgmajfault 7\n");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->pgmajfault, 7u);
}

TEST(VmstatRead, MissingFileIsAbsent) {
  test::TempDir dir;
  const auto v = read_vmstat(HostRoot(dir.path()));
  ASSERT_TRUE(v);
  EXPECT_FALSE(v->has_value());
}

TEST(VmstatCounter, FindsOneCounterAndRefusesAMalformedKeyLine) {
  EXPECT_EQ(vmstat_counter(kModern, "pgmajfault"), 412377u);
  EXPECT_EQ(vmstat_counter(kModern, "nr_free_pages"), 1310720u);  // the first line
  EXPECT_EQ(vmstat_counter(kModern, "pgmaj"), std::nullopt);       // a prefix is not the key
  EXPECT_EQ(vmstat_counter("nr_pgmajfault 1\npgmajfault 2\n", "pgmajfault"), 2u);
  EXPECT_EQ(vmstat_counter("pgmajfault 1 2\npgmajfault 3\n", "pgmajfault"), std::nullopt);
  EXPECT_EQ(vmstat_counter("pgmajfault x\n", "pgmajfault"), std::nullopt);
  EXPECT_EQ(vmstat_counter("", "pgmajfault"), std::nullopt);
  EXPECT_EQ(vmstat_counter(kModern, ""), std::nullopt);
}

namespace {

// The line walk vmstat_counter replaced: tokenise every line until one starts with the key.
std::optional<std::uint64_t> counter_by_line_walk(std::string_view text, std::string_view key) {
  std::string_view line;
  for (std::string_view rest = text; proc_text::next_line(rest, line);) {
    std::string_view tokens = trim(line);
    std::string_view name, value, extra;
    if (!proc_text::next_token(tokens, name) || name != key) continue;
    if (!proc_text::next_token(tokens, value) || proc_text::next_token(tokens, extra))
      return std::nullopt;
    return parse_u64(value);
  }
  return std::nullopt;
}

}  // namespace

// The skip-ahead search answers as the walk of every line does, on texts built from the pieces
// that decide a key line: the key, its prefixes and extensions, every kind of whitespace trim()
// and the tokeniser treat differently, digits and signs.
TEST(VmstatCounter, AgreesWithTheLineWalkOnRandomTexts) {
  const std::string_view pieces[] = {"pgmajfault", "pgmajfaul", "xpgmajfault", "pgmajfault_x",
                                     " ", "\t", "\n", "\r", "\f", "\v", "0", "7", "42",
                                     "18446744073709551615", "18446744073709551616", "+", "-",
                                     "x", "nr_free 3\n"};
  std::mt19937 rng(22);  // fixed seed: a failure reproduces
  std::uniform_int_distribution<std::size_t> piece(0, std::size(pieces) - 1);
  std::uniform_int_distribution<int> length(0, 40);
  for (int i = 0; i < 20000; ++i) {
    std::string text;
    for (int n = length(rng); n > 0; --n) text += pieces[piece(rng)];
    for (const std::string_view key : {"pgmajfault", "pgmajfaul", "7"}) {
      ASSERT_EQ(vmstat_counter(text, key), counter_by_line_walk(text, key))
          << "key " << key << " in " << testing::PrintToString(text);
    }
  }
}

}  // namespace sparkops::host
