// The caching-allocator model against a plain restatement of the same rules (an ordered std::set
// per pool, blocks in a map), over random request and free sequences: the model's free lists are
// a tuned sorted vector with a branch-free search, and every figure the replay gives must be the
// one the straightforward version gives (same block chosen, same split, same merge, same peak).
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "plan/caching_allocator.hpp"

namespace sparkops::plan {
namespace {

constexpr std::uint64_t MiB = 1024ULL * 1024ULL;

// CUDACachingAllocator's segment rules (no expandable segments), written for clarity.
class Reference {
 public:
  explicit Reference(AllocatorConfig c) : c_(c) {}

  std::uint32_t malloc(std::uint64_t bytes) {
    const std::uint64_t size = round_size(bytes);
    const bool small = size <= kSmallSize;
    std::uint32_t id = 0;
    if (!take_free(small, size, id)) {
      const std::uint64_t seg = allocation_size(size);
      if (c_.capacity != std::numeric_limits<std::uint64_t>::max() &&
          reserved_ + seg > c_.capacity) {
        release();
        if (reserved_ + seg > c_.capacity) oom_ = true;
      }
      id = next_id_++;
      blocks_[id] = Block{seg, 0, -1, -1, false, small};
      reserved_ += seg;
      ++segments_;
    }
    Block& b = blocks_[id];
    const std::uint64_t rest = b.size - size;
    if (small ? rest >= kMinBlockSize : size < c_.max_split_size && rest > kSmallSize) {
      const std::uint32_t rid = next_id_++;
      blocks_[rid] = Block{rest, 0, id, b.next, false, small};
      if (b.next >= 0) blocks_[static_cast<std::uint32_t>(b.next)].prev = rid;
      b.next = rid;
      b.size = size;
      pool(small).insert({rest, rid});
    }
    b.allocated = true;
    b.requested = bytes;
    allocated_ += b.size;
    requested_ += bytes;
    peak_allocated_ = std::max(peak_allocated_, allocated_);
    peak_reserved_ = std::max(peak_reserved_, reserved_);
    peak_requested_ = std::max(peak_requested_, requested_);
    return id;
  }

  void free(std::uint32_t id) {
    Block& b = blocks_[id];
    b.allocated = false;
    allocated_ -= b.size;
    requested_ -= b.requested;
    auto& p = pool(b.small);
    std::uint32_t cur = id;
    if (b.next >= 0 && !blocks_[static_cast<std::uint32_t>(b.next)].allocated) {
      const auto n = static_cast<std::uint32_t>(b.next);
      p.erase({blocks_[n].size, n});
      b.size += blocks_[n].size;
      b.next = blocks_[n].next;
      if (b.next >= 0) blocks_[static_cast<std::uint32_t>(b.next)].prev = id;
      blocks_.erase(n);
    }
    Block& c = blocks_[cur];
    if (c.prev >= 0 && !blocks_[static_cast<std::uint32_t>(c.prev)].allocated) {
      const auto pv = static_cast<std::uint32_t>(c.prev);
      p.erase({blocks_[pv].size, pv});
      blocks_[pv].size += c.size;
      blocks_[pv].next = c.next;
      if (c.next >= 0) blocks_[static_cast<std::uint32_t>(c.next)].prev = pv;
      blocks_.erase(cur);
      cur = pv;
    }
    p.insert({blocks_[cur].size, cur});
  }

  std::uint64_t allocated_ = 0, reserved_ = 0, requested_ = 0, segments_ = 0;
  std::uint64_t peak_allocated_ = 0, peak_reserved_ = 0, peak_requested_ = 0;
  bool oom_ = false;

 private:
  struct Block {
    std::uint64_t size = 0, requested = 0;
    std::int64_t prev = -1, next = -1;
    bool allocated = false, small = false;
  };
  using Free = std::set<std::pair<std::uint64_t, std::uint32_t>>;
  Free& pool(bool small) { return small ? small_ : large_; }

  bool take_free(bool small, std::uint64_t size, std::uint32_t& out) {
    Free& p = pool(small);
    auto it = p.lower_bound({size, 0});
    if (it == p.end()) return false;
    if (size < c_.max_split_size && it->first >= c_.max_split_size) return false;
    if (size >= c_.max_split_size && it->first >= size + kLargeBuffer) return false;
    out = it->second;
    p.erase(it);
    return true;
  }

  void release() {
    for (Free* p : {&small_, &large_}) {
      for (auto it = p->begin(); it != p->end();) {
        const Block& b = blocks_[it->second];
        if (b.prev < 0 && b.next < 0) {
          reserved_ -= b.size;
          --segments_;
          blocks_.erase(it->second);
          it = p->erase(it);
        } else {
          ++it;
        }
      }
    }
  }

  AllocatorConfig c_;
  std::map<std::uint32_t, Block> blocks_;
  Free small_, large_;
  std::uint32_t next_id_ = 0;
};

TEST(CachingAllocatorReference, RandomSequencesGiveTheSameBlocksAndFigures) {
  for (unsigned seed = 0; seed < 60; ++seed) {
    std::mt19937_64 rnd(seed);
    AllocatorConfig cfg;
    if (seed % 3 == 1) cfg.max_split_size = 32 * MiB;
    if (seed % 4 == 2) cfg.capacity = (200 + rnd() % 600) * MiB;
    CachingAllocator model(cfg);
    Reference ref(cfg);
    // A few sizes repeat, as a replay's tensors do, so best fit meets ties among equal blocks.
    std::vector<std::uint64_t> palette;
    for (int k = 0; k < 6; ++k) palette.push_back(1 + rnd() % (40 * MiB));
    std::vector<std::uint32_t> live;
    for (int op = 0; op < 1500; ++op) {
      if (!live.empty() && rnd() % 100 < 45) {
        const std::size_t k = rnd() % live.size();
        model.free(live[k]);
        ref.free(live[k]);
        live[k] = live.back();
        live.pop_back();
      } else {
        const std::uint64_t r = rnd() % 100;
        const std::uint64_t bytes = r < 50   ? palette[rnd() % palette.size()]
                                    : r < 75 ? 1 + rnd() % kSmallSize
                                    : r < 90 ? 1 + rnd() % (10 * MiB)
                                             : 1 + rnd() % (120 * MiB);
        const auto id = model.malloc(bytes);
        ASSERT_EQ(id, ref.malloc(bytes)) << "seed " << seed << " op " << op;
        live.push_back(id);
      }
      ASSERT_EQ(model.allocated_bytes(), ref.allocated_) << "seed " << seed << " op " << op;
      ASSERT_EQ(model.reserved_bytes(), ref.reserved_) << "seed " << seed << " op " << op;
      ASSERT_EQ(model.requested_bytes(), ref.requested_);
      ASSERT_EQ(model.segments(), ref.segments_);
    }
    EXPECT_EQ(model.peak_allocated_bytes(), ref.peak_allocated_);
    EXPECT_EQ(model.peak_reserved_bytes(), ref.peak_reserved_);
    EXPECT_EQ(model.peak_requested_bytes(), ref.peak_requested_);
    EXPECT_EQ(model.out_of_memory(), ref.oom_);
  }
}

}  // namespace
}  // namespace sparkops::plan
