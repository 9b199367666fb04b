// The caching-allocator model against cases computed by hand from CUDACachingAllocator.cpp's
// rules (round_size, get_allocation_size, get_free_block, should_split, try_merge_blocks,
// release_cached_blocks, expandable segments).
#include "plan/caching_allocator.hpp"

#include <gtest/gtest.h>

#include "plan/step_replay.hpp"

namespace sparkops::plan {
namespace {

constexpr std::uint64_t MiB = 1024ULL * 1024ULL;

TEST(CachingAllocator, RoundsAndSizesSegmentsAsTorch) {
  EXPECT_EQ(round_size(1), 512u);
  EXPECT_EQ(round_size(512), 512u);
  EXPECT_EQ(round_size(513), 1024u);
  EXPECT_EQ(allocation_size(4096), 2 * MiB);     // small pool: 2 MiB segments
  EXPECT_EQ(allocation_size(1 * MiB), 2 * MiB);  // 1 MiB is still small
  EXPECT_EQ(allocation_size(1 * MiB + 512), 20 * MiB);
  EXPECT_EQ(allocation_size(10 * MiB - 512), 20 * MiB);
  EXPECT_EQ(allocation_size(10 * MiB), 10 * MiB);  // from 10 MiB: rounded to 2 MiB
  EXPECT_EQ(allocation_size(25 * MiB), 26 * MiB);
}

TEST(CachingAllocator, TwoThreeMiBRequestsShareOneTwentyMiBSegment) {
  CachingAllocator a;
  a.malloc(3 * MiB);
  a.malloc(3 * MiB);
  EXPECT_EQ(a.reserved_bytes(), 20 * MiB);
  EXPECT_EQ(a.allocated_bytes(), 6 * MiB);
  EXPECT_EQ(a.segments(), 1u);
}

TEST(CachingAllocator, LargeRequestGetsItsRoundedSegmentAndKeepsTheUnsplitRemainder) {
  CachingAllocator a;
  a.malloc(25 * MiB);
  EXPECT_EQ(a.reserved_bytes(), 26 * MiB);
  // 1 MiB remains: a large block splits only when more than 1 MiB would remain, so the whole
  // 26 MiB block is handed out and counted as allocated.
  EXPECT_EQ(a.allocated_bytes(), 26 * MiB);
  EXPECT_EQ(a.requested_bytes(), 25 * MiB);
}

TEST(CachingAllocator, FreedBlocksStayCachedAndAreReusedBestFit) {
  CachingAllocator a;
  const auto big = a.malloc(100 * MiB);
  a.free(big);
  EXPECT_EQ(a.reserved_bytes(), 100 * MiB);  // cached, not returned
  EXPECT_EQ(a.allocated_bytes(), 0u);
  a.malloc(60 * MiB);  // split from the cached block: 40 MiB stays free
  EXPECT_EQ(a.reserved_bytes(), 100 * MiB);
  a.malloc(50 * MiB);  // the 40 MiB remainder is too small: a new segment
  EXPECT_EQ(a.reserved_bytes(), 150 * MiB);
  EXPECT_EQ(a.peak_reserved_bytes(), 150 * MiB);
  a.malloc(40 * MiB);  // the remainder exactly
  EXPECT_EQ(a.reserved_bytes(), 150 * MiB);
}

TEST(CachingAllocator, SmallPoolPacksRequestsIntoTwoMiBSegments) {
  CachingAllocator a;
  a.malloc(4096);
  a.malloc(1000);     // rounds to 1024
  a.malloc(1 * MiB);  // still the small pool; fits beside them
  EXPECT_EQ(a.reserved_bytes(), 2 * MiB);
  EXPECT_EQ(a.allocated_bytes(), 4096u + 1024u + 1 * MiB);
  a.malloc(1 * MiB);  // 2 MiB - 1 MiB - 5 KiB left: a second segment
  EXPECT_EQ(a.reserved_bytes(), 4 * MiB);
}

TEST(CachingAllocator, FreedNeighboursMerge) {
  CachingAllocator a;
  const auto x = a.malloc(3 * MiB);
  const auto y = a.malloc(3 * MiB);
  a.free(x);
  a.free(y);  // x, y and the 14 MiB remainder merge back into one 20 MiB block
  a.malloc(18 * MiB);
  EXPECT_EQ(a.reserved_bytes(), 20 * MiB);
  EXPECT_EQ(a.segments(), 1u);
}

TEST(CachingAllocator, MaxSplitSizeKeepsOversizeBlocksWhole) {
  AllocatorConfig c;
  c.max_split_size = 10 * MiB;
  CachingAllocator a(c);
  a.free(a.malloc(40 * MiB));
  a.malloc(5 * MiB);  // never carved out of a >= max_split_size block
  EXPECT_EQ(a.reserved_bytes(), 60 * MiB);
  a.malloc(39 * MiB);  // an oversize block serves a large request less than 20 MiB smaller
  EXPECT_EQ(a.reserved_bytes(), 60 * MiB);
}

TEST(CachingAllocator, CacheIsReleasedOnlyWhenCapacityRunsOut) {
  AllocatorConfig c;
  c.capacity = 50 * MiB;
  CachingAllocator a(c);
  a.free(a.malloc(30 * MiB));
  a.malloc(40 * MiB);  // 30 cached + 40 new > 50: the cached segment goes back, then retry
  EXPECT_EQ(a.reserved_bytes(), 40 * MiB);
  EXPECT_EQ(a.peak_reserved_bytes(), 40 * MiB);
  EXPECT_FALSE(a.out_of_memory());
  EXPECT_EQ(a.alloc_retries(), 1u);  // torch's num_alloc_retries
  a.malloc(20 * MiB);                // 40 in use + 20 > 50 and nothing cached to give back
  EXPECT_TRUE(a.out_of_memory());
  EXPECT_EQ(a.alloc_retries(), 2u);
}

TEST(CachingAllocator, NoReleaseWhileTheCapacityHolds) {
  AllocatorConfig c;
  c.capacity = 70 * MiB;
  CachingAllocator a(c);
  a.free(a.malloc(30 * MiB));
  a.malloc(40 * MiB);  // 30 cached + 40 new = 70: fits, the cache stays
  EXPECT_EQ(a.reserved_bytes(), 70 * MiB);
  EXPECT_EQ(a.alloc_retries(), 0u);
  EXPECT_FALSE(a.out_of_memory());
}

TEST(CachingAllocator, ExpandableSegmentsGrowAFreeTailInPlace) {
  AllocatorConfig c;
  c.expandable_segments = true;
  CachingAllocator a(c);
  a.free(a.malloc(30 * MiB));  // maps two 20 MiB pages
  EXPECT_EQ(a.reserved_bytes(), 40 * MiB);
  a.malloc(50 * MiB);  // the free 40 MiB tail grows by one page
  EXPECT_EQ(a.reserved_bytes(), 60 * MiB);
  CachingAllocator plain;
  plain.free(plain.malloc(30 * MiB));
  plain.malloc(50 * MiB);
  EXPECT_EQ(plain.reserved_bytes(), 80 * MiB);
}

// A small model: two layers, each keeping one 16 MiB tensor and passing through a 40 MiB one.
ReplayModel tiny_model(bool ckpt) {
  ReplayModel m;
  m.params = {64 * MiB, 64 * MiB, 4096};
  m.adapters = {256 * 1024, 256 * 1024};
  m.layer_grads = {128 * 1024};
  m.states = {128 * 1024, 128 * 1024, 128 * 1024, 128 * 1024};
  m.step_temps = {128 * 1024, 128 * 1024};
  m.layers = 2;
  m.checkpointing = ckpt;
  return m;
}
StepShape tiny_step(double scale) {
  StepShape s;
  s.hidden = 8.0 * MiB * scale;
  s.inputs = 64 * 1024;
  s.layer = {{40.0 * MiB * scale, false}, {16.0 * MiB * scale, true}};
  s.layer_backward_peak = 30.0 * MiB * scale;
  s.loss_saved = 12.0 * MiB * scale;
  s.loss_forward = 12.0 * MiB * scale;
  s.loss_backward = 24.0 * MiB * scale;
  return s;
}

TEST(StepReplay, RepeatedShapesReachASteadyState) {
  const auto m = tiny_model(true);
  const auto two = replay_training(m, {tiny_step(1), tiny_step(1)});
  const auto five = replay_training(m, std::vector<StepShape>(5, tiny_step(1)));
  EXPECT_EQ(two.peak_reserved, five.peak_reserved);
  EXPECT_GE(two.peak_reserved, two.peak_allocated);
  EXPECT_GE(two.peak_allocated, two.peak_requested);
  // Weights alone are 128 MiB in their own segments.
  EXPECT_GT(two.peak_requested, 128 * MiB);
}

TEST(StepReplay, RisingLengthsReserveMoreThanTheLongestAlone) {
  const auto m = tiny_model(false);
  const auto fixed = replay_training(m, {tiny_step(1), tiny_step(1)});
  std::vector<StepShape> rising;
  for (int k = 1; k <= 8; ++k) rising.push_back(tiny_step(k / 8.0));
  const auto varying = replay_training(m, rising);
  EXPECT_EQ(varying.peak_requested, fixed.peak_requested);  // the longest step asks the most
  EXPECT_GT(varying.peak_reserved, fixed.peak_reserved);
  AllocatorConfig c;
  c.expandable_segments = true;
  EXPECT_LT(replay_training(m, rising, c).peak_reserved, varying.peak_reserved);
}

TEST(StepReplay, QuantizedLoadHoldsEachSixteenBitSourceWhileItsPackedDataIsMade) {
  // Two 4-bit weights: each quantized from a 64 MiB fp16 device copy that lives while its packed
  // data (16 MiB) and absmax (1 MiB) are allocated; the second copy reuses the first's block.
  ReplayModel m;
  m.params = {16 * MiB, 1 * MiB, 16 * MiB, 1 * MiB};
  m.load_sources = {{64 * MiB, 2}, {}, {64 * MiB, 2}, {}};
  const auto loaded = replay_training(m, {});
  EXPECT_EQ(loaded.peak_requested, (64 + 16 + 1 + 16 + 1) * MiB);
  m.load_sources.clear();
  EXPECT_EQ(replay_training(m, {}).peak_requested, (16 + 1 + 16 + 1) * MiB);
}

TEST(StepReplay, AHeadCopyOfOneSizeIsCachedOnceAcrossLengths) {
  // A weight-sized tensor the head keeps (NormHead) is the same size at every length: the rise
  // reuses its block, so it adds itself, not a copy per shape.
  const auto m = tiny_model(false);
  std::vector<StepShape> rising, with_copy;
  for (int k = 1; k <= 8; ++k) {
    rising.push_back(tiny_step(k / 8.0));
    with_copy.push_back(tiny_step(k / 8.0));
    with_copy.back().head_copy = 32.0 * MiB;
  }
  const auto a = replay_training(m, rising), b = replay_training(m, with_copy);
  EXPECT_GT(b.peak_requested, a.peak_requested);
  EXPECT_LE(b.peak_requested - a.peak_requested, 32 * MiB);
  EXPECT_LE(b.peak_reserved - a.peak_reserved, 34 * MiB);  // one rounded segment, not eight
}

}  // namespace
}  // namespace sparkops::plan
