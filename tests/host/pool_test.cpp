#include "host/pool.hpp"

#include <gtest/gtest.h>

namespace sparkops::host {

namespace {
Meminfo gb10_after_writing_60g_file() {
  // docs/domain.md: writing a 60 GiB file dropped CUDA-free (MemFree) from 103 to 41 GiB while
  // MemAvailable stayed ~116 GiB.
  Meminfo m;
  m.mem_total_bytes = 127600748ULL * 1024;
  m.mem_free_bytes = 41ULL << 30;
  m.mem_available_bytes = 116ULL << 30;
  m.swap_free_bytes = 16ULL << 30;
  return m;
}
}  // namespace

TEST(Pool, ReclaimableIsAvailableMinusFree) {
  const auto p = compute_pool(gb10_after_writing_60g_file(), std::nullopt, {});
  ASSERT_TRUE(p);
  EXPECT_EQ(p->reclaimable_bytes, 75ULL << 30);
  EXPECT_TRUE(p->flush_suggested);
  EXPECT_EQ(p->budget_bytes, 112ULL << 30);
}

TEST(Pool, SwapCountsOnlyWhenAsked) {
  PoolOptions o;
  o.swap = SwapPolicy::counted;
  const auto p = compute_pool(gb10_after_writing_60g_file(), std::nullopt, o);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->available_bytes, 132ULL << 30);
}

TEST(Pool, LowerCgroupLimitBecomesTheBudgetBase) {
  CgroupMemory cg;
  cg.max_bytes = 32ULL << 30;
  cg.current_bytes = 8ULL << 30;
  const auto p = compute_pool(gb10_after_writing_60g_file(), cg, {});
  ASSERT_TRUE(p);
  ASSERT_TRUE(p->cgroup_headroom_bytes);
  EXPECT_EQ(*p->cgroup_headroom_bytes, 24ULL << 30);
  EXPECT_EQ(p->budget_bytes, 20ULL << 30);
}

TEST(Pool, BudgetNeverGoesNegative) {
  Meminfo m = gb10_after_writing_60g_file();
  m.mem_available_bytes = 1ULL << 30;
  m.mem_free_bytes = 1ULL << 30;
  const auto p = compute_pool(m, std::nullopt, {});
  ASSERT_TRUE(p);
  EXPECT_EQ(p->budget_bytes, 0u);
  EXPECT_FALSE(p->flush_suggested);
}

TEST(Pool, MissingMemAvailableIsError) {
  Meminfo m = gb10_after_writing_60g_file();
  m.mem_available_bytes.reset();
  const auto p = compute_pool(m, std::nullopt, {});
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().detail.find("MemAvailable"), std::string::npos);
}

}  // namespace sparkops::host
