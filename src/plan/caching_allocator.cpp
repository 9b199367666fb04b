#include "plan/caching_allocator.hpp"

#include <algorithm>

namespace sparkops::plan {

std::uint64_t round_size(std::uint64_t bytes) {
  if (bytes < kMinBlockSize) return kMinBlockSize;
  return kMinBlockSize * ((bytes + kMinBlockSize - 1) / kMinBlockSize);
}

std::uint64_t allocation_size(std::uint64_t rounded) {
  if (rounded <= kSmallSize) return kSmallBuffer;
  if (rounded < kMinLargeAlloc) return kLargeBuffer;
  return kRoundLarge * ((rounded + kRoundLarge - 1) / kRoundLarge);
}

CachingAllocator::CachingAllocator(AllocatorConfig config) : config_(config) {
  blocks_.reserve(1024);
}

void CachingAllocator::note_peaks() {
  peak_allocated_ = std::max(peak_allocated_, allocated_);
  peak_reserved_ = std::max(peak_reserved_, reserved_);
  peak_requested_ = std::max(peak_requested_, requested_);
}

// get_free_block: the smallest cached block >= size, unless max_split_size forbids it.
bool CachingAllocator::find_free(bool small, std::uint64_t size, FreeSet::iterator& at) {
  FreeSet& p = pool(small);
  auto it = p.lower_bound({size, 0});
  if (it == p.end()) return false;
  const std::uint64_t block = it->first;
  const std::uint64_t max_split = config_.max_split_size;
  // Do not return an oversized block for a small request, nor one far larger than a large one.
  if (size < max_split && block >= max_split) return false;
  if (size >= max_split && block >= size + kLargeBuffer) return false;
  at = it;
  return true;
}

CachingAllocator::Id CachingAllocator::new_segment(bool small, std::uint64_t size) {
  Block b;
  b.size = size;
  b.small = small;
  blocks_.push_back(b);
  reserved_ += size;
  ++segment_count_;
  return static_cast<Id>(blocks_.size() - 1);
}

// ExpandableSegment: one virtual range per pool; a miss maps pages onto its end, extending a
// free tail block in place.
bool CachingAllocator::grow_expandable(bool small, std::uint64_t size, Id& out) {
  const std::uint64_t page = small ? kSmallBuffer : kLargeBuffer;
  std::int64_t& tail = tail_[small ? 1 : 0];
  std::uint64_t have = 0;
  if (tail >= 0 && !blocks_[tail].allocated) {
    have = blocks_[tail].size;
    pool(small).erase({have, static_cast<Id>(tail)});
  }
  const std::uint64_t need = size - have;
  const std::uint64_t mapped = page * ((need + page - 1) / page);
  if (config_.capacity != std::numeric_limits<std::uint64_t>::max() &&
      reserved_ + mapped > config_.capacity) {
    if (have > 0) pool(small).insert({have, static_cast<Id>(tail)});
    return false;
  }
  reserved_ += mapped;
  if (have > 0) {
    blocks_[tail].size += mapped;
    out = static_cast<Id>(tail);
    return true;
  }
  Block b;
  b.size = mapped;
  b.small = small;
  b.prev = tail;
  blocks_.push_back(b);
  const auto id = static_cast<std::int64_t>(blocks_.size() - 1);
  if (tail >= 0) blocks_[tail].next = id;
  if (segment_count_ == 0 || tail < 0) ++segment_count_;
  tail = id;
  out = static_cast<Id>(id);
  return true;
}

// release_cached_blocks: every free block that is a whole segment goes back to the driver.
void CachingAllocator::release_free_segments() {
  for (FreeSet* p : {&small_free_, &large_free_}) {
    for (auto it = p->begin(); it != p->end();) {
      Block& b = blocks_[it->second];
      const bool whole = b.prev < 0 && b.next < 0;
      const bool free_tail = config_.expandable_segments && b.next < 0;
      if (whole || free_tail) {
        reserved_ -= b.size;
        b.live = false;
        if (b.prev >= 0) blocks_[b.prev].next = -1;
        std::int64_t& tail = tail_[b.small ? 1 : 0];
        if (tail == static_cast<std::int64_t>(it->second)) tail = b.prev;
        if (whole && segment_count_ > 0) --segment_count_;
        it = p->erase(it);
      } else {
        ++it;
      }
    }
  }
}

void CachingAllocator::empty_cache() {
  release_free_segments();
}

CachingAllocator::Id CachingAllocator::malloc(std::uint64_t bytes) {
  const std::uint64_t size = round_size(bytes);
  const bool small = size <= kSmallSize;
  Id id = 0;
  FreeSet::iterator at{};
  bool from_free = find_free(small, size, at);
  if (from_free) id = at->second;
  bool found = from_free;
  if (!found && config_.expandable_segments) {
    found = grow_expandable(small, size, id);
    if (!found) {
      release_free_segments();
      ++alloc_retries_;
      from_free = find_free(small, size, at);
      if (from_free) id = at->second;
      found = from_free || grow_expandable(small, size, id);
    }
    if (!found) {
      oom_ = true;
      // Recorded as a failure; the block is still granted so the replay can go on.
      config_.capacity = std::numeric_limits<std::uint64_t>::max();
      found = grow_expandable(small, size, id);
    }
  }
  if (!found) {
    const std::uint64_t seg = allocation_size(size);
    if (config_.capacity != std::numeric_limits<std::uint64_t>::max() &&
        reserved_ + seg > config_.capacity) {
      release_free_segments();
      ++alloc_retries_;
      if (reserved_ + seg > config_.capacity) oom_ = true;
    }
    id = new_segment(small, seg);
  }
  // Nothing below touches the free lists before `at` is consumed (only the block table grows).
  Block& b = blocks_[id];
  const std::uint64_t remaining = b.size - size;
  const bool split =
      small ? remaining >= kMinBlockSize : size < config_.max_split_size && remaining > kSmallSize;
  if (split) {
    Block rest;
    rest.size = remaining;
    rest.small = small;
    rest.prev = id;
    rest.next = b.next;
    blocks_.push_back(rest);
    const auto rid = static_cast<std::int64_t>(blocks_.size() - 1);
    Block& bb = blocks_[id];  // the push may have moved it
    if (bb.next >= 0) blocks_[bb.next].prev = rid;
    bb.next = rid;
    bb.size = size;
    std::int64_t& tail = tail_[small ? 1 : 0];
    if (config_.expandable_segments && tail == static_cast<std::int64_t>(id)) tail = rid;
    const FreeSet::Key rest_key{remaining, static_cast<Id>(rid)};
    if (from_free)
      pool(small).replace(at, rest_key);
    else
      pool(small).insert(rest_key);
  } else if (from_free) {
    pool(small).erase(at);
  }
  Block& a = blocks_[id];
  a.allocated = true;
  a.requested = bytes;
  allocated_ += a.size;
  requested_ += bytes;
  note_peaks();
  return id;
}

void CachingAllocator::free(Id id) {
  if (id >= blocks_.size() || !blocks_[id].allocated) return;
  Block& b = blocks_[id];
  b.allocated = false;
  allocated_ -= b.size;
  requested_ -= b.requested;
  b.requested = 0;
  FreeSet& p = pool(b.small);
  std::int64_t& tail = tail_[b.small ? 1 : 0];
  // try_merge_blocks with the previous and the next block of the segment when they are free. The
  // first key a merge removes is replaced by the merged block's (one shift of the list).
  bool have_slot = false;
  FreeSet::Key slot{};
  auto vacate = [&](FreeSet::Key k) {
    if (have_slot) {
      p.erase(k);
    } else {
      slot = k;
      have_slot = true;
    }
  };
  auto absorb = [&](std::int64_t into, std::int64_t gone) {
    Block& g = blocks_[gone];
    vacate({g.size, static_cast<Id>(gone)});
    blocks_[into].size += g.size;
    blocks_[into].next = g.next;
    if (g.next >= 0) blocks_[g.next].prev = into;
    g.live = false;
    if (tail == gone) tail = into;
  };
  std::int64_t cur = id;
  if (b.next >= 0 && !blocks_[b.next].allocated && blocks_[b.next].live) absorb(cur, b.next);
  if (blocks_[cur].prev >= 0 && !blocks_[blocks_[cur].prev].allocated) {
    const std::int64_t prev = blocks_[cur].prev;
    vacate({blocks_[prev].size, static_cast<Id>(prev)});
    // Merge cur into prev: prev keeps its identity (its address comes first).
    Block& pv = blocks_[prev];
    Block& c = blocks_[cur];
    pv.size += c.size;
    pv.next = c.next;
    if (c.next >= 0) blocks_[c.next].prev = prev;
    c.live = false;
    if (tail == cur) tail = prev;
    cur = prev;
  }
  const FreeSet::Key merged{blocks_[cur].size, static_cast<Id>(cur)};
  if (have_slot)
    p.replace(slot, merged);
  else
    p.insert(merged);
}

}  // namespace sparkops::plan
