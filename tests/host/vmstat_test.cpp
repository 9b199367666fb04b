#include "host/vmstat.hpp"

#include <gtest/gtest.h>

#include "support/test_support.hpp"

namespace sparkops {

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

}  // namespace sparkops
