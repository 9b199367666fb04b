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

// A whole meminfo of a 6.8 kernel (the order every kernel prints), for the sampling path's parse.
constexpr std::string_view kFull =
    "MemTotal:       127600748 kB\n"
    "MemFree:        100123456 kB\n"
    "MemAvailable:   118566368 kB\n"
    "Buffers:           12345 kB\n"
    "Cached:          9876543 kB\n"
    "SwapCached:            0 kB\n"
    "Active:          3333333 kB\n"
    "Shmem:           1048576 kB\n"
    "HugePages_Total:       0\n"
    "Hugepagesize:       2048 kB\n";

TEST(MeminfoSampleParse, TheFourFieldsAsTheFullParseGivesThem) {
  for (const std::string_view text :
       {kFull, kGb10, std::string_view("Zswap: 7 kB\nCached: 5\nMemFree: 2 kB\nMemTotal: 3 kB\n"),
        std::string_view(""), std::string_view("MemTotal 1 kB\n:\nMemFree:2 kB")}) {
    const auto full = parse_meminfo(text);
    const auto four = parse_meminfo_sample(text);
    ASSERT_TRUE(full);
    ASSERT_TRUE(four) << four.error().detail;
    EXPECT_EQ(four->mem_total_bytes, full->mem_total_bytes) << text;
    EXPECT_EQ(four->mem_free_bytes, full->mem_free_bytes) << text;
    EXPECT_EQ(four->mem_available_bytes, full->mem_available_bytes) << text;
    EXPECT_EQ(four->cached_bytes, full->cached_bytes) << text;
    // Nothing but the four.
    EXPECT_FALSE(four->buffers_bytes);
    EXPECT_FALSE(four->shmem_bytes);
    EXPECT_FALSE(four->hugepage_size_bytes);
  }
  EXPECT_EQ(parse_meminfo_sample(kFull)->cached_bytes, 9876543ULL * 1024);
}

TEST(MeminfoSampleParse, StopsAfterTheFourAndChecksOnlyThem) {
  // A garbled line after the four is not read; the full parse refuses it.
  const std::string text = std::string(kFull) + "Mapped: lots kB\n";
  EXPECT_FALSE(parse_meminfo(text));
  const auto four = parse_meminfo_sample(text);
  ASSERT_TRUE(four);
  EXPECT_EQ(four->mem_free_bytes, 100123456ULL * 1024);
  // A garbled line among the keys it reads is an error naming the line, as the full parse says.
  const auto bad = parse_meminfo_sample("MemTotal: 1 kB\nBuffers: x\nCached: 1 MB\n");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, Errc::malformed);
  EXPECT_NE(bad.error().detail.find("line 3"), std::string::npos);
  // Without all four present every line is read; a missing one stays absent.
  const auto three = parse_meminfo_sample("MemTotal: 1 kB\nMemFree: 2 kB\nMemAvailable: 3 kB\n");
  ASSERT_TRUE(three);
  EXPECT_FALSE(three->cached_bytes);
  EXPECT_EQ(three->mem_available_bytes, 3072u);
}

TEST(MeminfoRead, MissingFileIsNotFound) {
  test::TempDir dir;
  const auto m = read_meminfo(HostRoot(dir.path()));
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().code, Errc::not_found);
}

}  // namespace sparkops::host
