#include "host/meminfo.hpp"

#include <gtest/gtest.h>

#include "support/test_support.hpp"

namespace sparkops::host {

// A GB10's /proc/meminfo, as captured beside an NVML memory query that is not supported there
// (corpus capture nvml-ctypes-memoryinfo-not-supported-plus-meminfo.txt, copied here).
constexpr std::string_view kGb10 =
    "MemTotal:       127600748 kB\n"
    "MemFree:        100123456 kB\n"
    "MemAvailable:   118566368 kB\n"
    "HugePages_Total:       0\n"
    "Hugepagesize:       2048 kB\n";

TEST(MeminfoParse, ConvertsKilobytesToBytesAndKeepsPageCounts) {
  const auto m = parse_meminfo(kGb10);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->mem_total_bytes, 127600748ULL * 1024);
  EXPECT_EQ(m->mem_available_bytes, 118566368ULL * 1024);
  EXPECT_EQ(m->hugepages_total, 0u);
  EXPECT_EQ(m->hugepage_size_bytes, 2048u * 1024);
}

TEST(MeminfoParse, MissingFieldIsAbsentNotZero) {
  const auto m = parse_meminfo("MemTotal: 1 kB\n");
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->mem_available_bytes.has_value());
  EXPECT_FALSE(m->cached_bytes.has_value());
}

TEST(MeminfoParse, IgnoresUnknownKeysAndOrder) {
  const auto m = parse_meminfo("Zswap: 7 kB\nMemFree: 2 kB\nMemTotal: 3 kB\n");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->mem_free_bytes, 2048u);
  EXPECT_EQ(m->mem_total_bytes, 3072u);
}

TEST(MeminfoParse, MalformedValueIsErrorNamingTheLine) {
  const auto m = parse_meminfo("MemTotal: 1 kB\nMemFree: lots kB\n");
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().code, Errc::malformed);
  EXPECT_NE(m.error().detail.find("line 2"), std::string::npos);
  EXPECT_NE(m.error().detail.find("MemFree"), std::string::npos);
}

TEST(MeminfoRead, MissingFileIsNotFound) {
  test::TempDir dir;
  const auto m = read_meminfo(HostRoot(dir.path()));
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().code, Errc::not_found);
}

}  // namespace sparkops::host
