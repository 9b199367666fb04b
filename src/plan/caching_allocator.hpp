#pragma once
// A model of PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp, torch 2.1-2.5;
// the rules below are unchanged across those releases), so `plan` can say what
// torch.cuda.max_memory_reserved will show for a sequence of allocations instead of applying a
// flat fraction. docs/estimator.md "The caching allocator" cites each rule:
//
// - round_size: every request rounds up to a multiple of 512 B (kMinBlockSize);
// - requests <= 1 MiB (kSmallSize) come from the small pool, whose segments are 2 MiB
//   (kSmallBuffer); larger requests from the large pool: below 10 MiB (kMinLargeAlloc) a new
//   segment is 20 MiB (kLargeBuffer), from 10 MiB up the request rounded up to 2 MiB
//   (kRoundLarge) — get_allocation_size;
// - a request takes the smallest cached free block of its pool that is large enough (best fit,
//   get_free_block); with max_split_size set, a block >= max_split_size never serves a smaller
//   request, and a large request takes an oversize block only when the block is less than
//   20 MiB bigger;
// - the block is split when what remains is >= 512 B (small pool) or > 1 MiB and the request is
//   below max_split_size (large pool, should_split); otherwise the whole block is handed out and
//   counted as allocated;
// - a freed block merges with free neighbours of its segment (try_merge_blocks) and stays
//   cached: segments are returned only when cudaMalloc fails (release_cached_blocks, then one
//   retry) or on empty_cache, so `reserved` keeps the high-water mark;
// - expandable_segments:True maps one growing segment per pool (ExpandableSegment, pages of
//   20 MiB for the large pool and 2 MiB for the small) instead of separate cudaMallocs, so a free
//   tail grows in place.
//
// Pure and deterministic: block identities stand in for addresses (a segment created later sorts
// after an earlier one, as cudaMalloc's addresses mostly do).

#include <algorithm>
#include <compare>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace sparkops::plan {

inline constexpr std::uint64_t kMiB = 1024ULL * 1024ULL;
inline constexpr std::uint64_t kMinBlockSize = 512;
inline constexpr std::uint64_t kSmallSize = 1 * kMiB;
inline constexpr std::uint64_t kSmallBuffer = 2 * kMiB;
inline constexpr std::uint64_t kLargeBuffer = 20 * kMiB;
inline constexpr std::uint64_t kMinLargeAlloc = 10 * kMiB;
inline constexpr std::uint64_t kRoundLarge = 2 * kMiB;

// CUDACachingAllocator round_size (without roundup_power2_divisions, the default).
std::uint64_t round_size(std::uint64_t bytes);
// get_allocation_size: the segment cudaMalloc'd for a rounded request no cached block served.
std::uint64_t allocation_size(std::uint64_t rounded);

struct AllocatorConfig {
  // PYTORCH_CUDA_ALLOC_CONF max_split_size_mb (default: unlimited, every block may split).
  std::uint64_t max_split_size = std::numeric_limits<std::uint64_t>::max();
  bool expandable_segments = false;  // PYTORCH_CUDA_ALLOC_CONF expandable_segments:True
  // What cudaMalloc can take in all; beyond it the cache is released and the request retried.
  std::uint64_t capacity = std::numeric_limits<std::uint64_t>::max();
};

class CachingAllocator {
 public:
  using Id = std::uint32_t;
  explicit CachingAllocator(AllocatorConfig config = {});

  // Allocates `bytes` (> 0: torch hands out no block for an empty tensor; callers skip those).
  Id malloc(std::uint64_t bytes);
  void free(Id id);
  void empty_cache();  // torch.cuda.empty_cache: every wholly free segment is returned

  // torch.cuda.memory_stats equivalents: allocated counts whole blocks (rounded, unsplit
  // remainders included), requested the bytes asked for.
  std::uint64_t allocated_bytes() const { return allocated_; }
  std::uint64_t reserved_bytes() const { return reserved_; }
  std::uint64_t requested_bytes() const { return requested_; }
  std::uint64_t peak_allocated_bytes() const { return peak_allocated_; }
  std::uint64_t peak_reserved_bytes() const { return peak_reserved_; }
  std::uint64_t peak_requested_bytes() const { return peak_requested_; }
  std::uint64_t segments() const { return segment_count_; }
  // A request that did not fit in `capacity` even after the cache was released.
  bool out_of_memory() const { return oom_; }
  // How often a segment did not fit in `capacity`, so the cache was released and the request
  // retried: torch.cuda.memory_stats()["num_alloc_retries"] (alloc_block(isRetry=true) after
  // release_cached_blocks).
  std::uint64_t alloc_retries() const { return alloc_retries_; }

 private:
  struct Block {
    std::uint64_t size = 0;
    std::uint64_t requested = 0;
    std::int64_t prev = -1, next = -1;  // neighbours in the same segment
    bool allocated = false;
    bool small = false;
    bool live = true;  // false once merged away or released
  };
  // The cached free blocks of a pool ordered by (size, id): best fit, then the oldest. A sorted
  // vector: a replay keeps at most a few hundred free blocks, where this beats a tree. The key is
  // trivially copyable (std::pair is not), so an insert or an erase shifts it with one memmove.
  // A merge or a split replaces one key with another (`replace`): only the entries between the
  // two positions move, once, instead of an erase's shift and an insert's shift of the tail.
  class FreeSet {
   public:
    struct Key {
      std::uint64_t first = 0;  // size
      Id second = 0;            // block id
      friend auto operator<=>(const Key&, const Key&) = default;
    };
    using iterator = std::vector<Key>::iterator;
    iterator lower_bound(Key k) { return std::lower_bound(v_.begin(), v_.end(), k); }
    iterator begin() { return v_.begin(); }
    iterator end() { return v_.end(); }
    void insert(Key k) { v_.insert(lower_bound(k), k); }
    void erase(Key k) {
      auto it = lower_bound(k);
      if (it != v_.end() && *it == k) v_.erase(it);
    }
    iterator erase(iterator it) { return v_.erase(it); }
    // Erases the entry at `at` and inserts `k`: the same list as erase(at) then insert(k).
    void replace(iterator at, Key k) {
      if (at == v_.end()) {
        insert(k);
        return;
      }
      if (*at < k) {
        // k sorts at or after the vacated slot: pull the entries in between one place left.
        auto to = std::lower_bound(at + 1, v_.end(), k);
        std::move(at + 1, to, at);
        *(to - 1) = k;
      } else {
        auto to = std::lower_bound(v_.begin(), at, k);
        std::move_backward(to, at, at + 1);
        *to = k;
      }
    }
    // erase(old) then insert(k); like erase, an absent `old` removes nothing.
    void replace(Key old, Key k) {
      auto it = lower_bound(old);
      if (it != v_.end() && *it == old)
        replace(it, k);
      else
        insert(k);
    }

   private:
    std::vector<Key> v_;
  };
  FreeSet& pool(bool small) { return small ? small_free_ : large_free_; }
  // get_free_block: the cached block a request of `size` takes, left in its list at `at` (the
  // caller erases it, or replaces its key with the split remainder's).
  bool find_free(bool small, std::uint64_t size, FreeSet::iterator& at);
  Id new_segment(bool small, std::uint64_t size);
  bool grow_expandable(bool small, std::uint64_t size, Id& out);
  void release_free_segments();
  void note_peaks();

  AllocatorConfig config_;
  std::vector<Block> blocks_;
  FreeSet small_free_, large_free_;
  std::int64_t tail_[2] = {-1, -1};  // expandable: the last block of each pool's segment
  std::uint64_t allocated_ = 0, reserved_ = 0, requested_ = 0;
  std::uint64_t peak_allocated_ = 0, peak_reserved_ = 0, peak_requested_ = 0;
  std::uint64_t segment_count_ = 0;
  std::uint64_t alloc_retries_ = 0;
  bool oom_ = false;
};

}  // namespace sparkops::plan
