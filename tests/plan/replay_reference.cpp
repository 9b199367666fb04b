// The replay exactly as it stood before the fast path (the allocator with erase-then-insert free
// lists, the driver allocating its per-layer lists): the reference every figure of the fast path
// (plan/step_replay.cpp) is compared with. Kept verbatim apart from its namespace; do not tune it.
#include "replay_reference.hpp"

#include <algorithm>
#include <cmath>
#include <compare>
#include <limits>
#include <vector>

namespace sparkops::plan::reference {

namespace {

class CachingAllocator {
 public:
  using Id = std::uint32_t;
  explicit CachingAllocator(AllocatorConfig config = {});

  // Allocates `bytes` (> 0: torch hands out no block for an empty tensor; callers skip those).
  Id malloc(std::uint64_t bytes);
  void free(Id id);

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
  class FreeSet {
   public:
    struct Key {
      std::uint64_t first = 0;  // size
      Id second = 0;            // block id
      friend auto operator<=>(const Key&, const Key&) = default;
    };
    std::vector<Key>::iterator lower_bound(Key k) {
      return std::lower_bound(v_.begin(), v_.end(), k);
    }
    std::vector<Key>::iterator begin() { return v_.begin(); }
    std::vector<Key>::iterator end() { return v_.end(); }
    void insert(Key k) { v_.insert(lower_bound(k), k); }
    void erase(Key k) {
      auto it = lower_bound(k);
      if (it != v_.end() && *it == k) v_.erase(it);
    }
    std::vector<Key>::iterator erase(std::vector<Key>::iterator it) { return v_.erase(it); }

   private:
    __extension__ using Order = unsigned __int128;  // GCC/Clang's 128-bit integer
    static Order order(Key k) { return (static_cast<Order>(k.first) << 32) | k.second; }
    std::vector<Key> v_;
  };
  FreeSet& pool(bool small) { return small ? small_free_ : large_free_; }
  bool find_free(bool small, std::uint64_t size, Id& out);
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

CachingAllocator::CachingAllocator(AllocatorConfig config) : config_(config) {
  blocks_.reserve(1024);
}

void CachingAllocator::note_peaks() {
  peak_allocated_ = std::max(peak_allocated_, allocated_);
  peak_reserved_ = std::max(peak_reserved_, reserved_);
  peak_requested_ = std::max(peak_requested_, requested_);
}

// get_free_block: the smallest cached block >= size, unless max_split_size forbids it.
bool CachingAllocator::find_free(bool small, std::uint64_t size, Id& out) {
  FreeSet& p = pool(small);
  auto it = p.lower_bound({size, 0});
  if (it == p.end()) return false;
  const std::uint64_t block = it->first;
  const std::uint64_t max_split = config_.max_split_size;
  // Do not return an oversized block for a small request, nor one far larger than a large one.
  if (size < max_split && block >= max_split) return false;
  if (size >= max_split && block >= size + kLargeBuffer) return false;
  out = it->second;
  p.erase(it);
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

CachingAllocator::Id CachingAllocator::malloc(std::uint64_t bytes) {
  const std::uint64_t size = round_size(bytes);
  const bool small = size <= kSmallSize;
  Id id = 0;
  bool found = find_free(small, size, id);
  if (!found && config_.expandable_segments) {
    found = grow_expandable(small, size, id);
    if (!found) {
      release_free_segments();
      ++alloc_retries_;
      found = find_free(small, size, id) || grow_expandable(small, size, id);
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
    pool(small).insert({remaining, static_cast<Id>(rid)});
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
  // try_merge_blocks with the previous and the next block of the segment when they are free.
  auto absorb = [&](std::int64_t into, std::int64_t gone) {
    Block& g = blocks_[gone];
    p.erase({g.size, static_cast<Id>(gone)});
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
    p.erase({blocks_[prev].size, static_cast<Id>(prev)});
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
  p.insert({blocks_[cur].size, static_cast<Id>(cur)});
}

}  // namespace

namespace {

using Id = CachingAllocator::Id;

std::uint64_t bytes_of(double v) {
  if (!(v > 0)) return 0;
  if (v >= 1.8e19) return std::uint64_t{1} << 63;
  return static_cast<std::uint64_t>(std::ceil(v));
}

// A live tensor, or none (an empty tensor takes no block).
struct Held {
  Id id = 0;
  bool live = false;
};

struct Replayer {
  CachingAllocator alloc;
  explicit Replayer(const AllocatorConfig& c) : alloc(c) {}

  Held take(double bytes) {
    const std::uint64_t b = bytes_of(bytes);
    if (b == 0) return {};
    return {alloc.malloc(b), true};
  }
  void drop(Held& h) {
    if (h.live) alloc.free(h.id);
    h.live = false;
  }
  void drop_all(std::vector<Held>& hs) {
    for (auto& h : hs) drop(h);
    hs.clear();
  }
  // A loss phase's listed transients (SimResult::LossBlock) in order: block j dropped once block
  // freed_after exists, `also` (the saved set, in backward) once block also_freed_after does; the
  // ones alive at the end are appended to `live`.
  void take_loss_blocks(const std::vector<SimResult::LossBlock>& blocks, std::vector<Held>& live,
                        Held* also = nullptr, int also_freed_after = -1) {
    const std::size_t first = live.size();
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      live.push_back(take(blocks[i].bytes));
      for (std::size_t j = 0; j < i; ++j)
        if (blocks[j].freed_after == static_cast<int>(i)) drop(live[first + j]);
      if (also && also_freed_after == static_cast<int>(i)) drop(*also);
    }
  }
  std::vector<Held> take_all(const std::vector<std::uint64_t>& sizes) {
    std::vector<Held> out;
    out.reserve(sizes.size());
    for (const auto s : sizes) out.push_back(take(static_cast<double>(s)));
    return out;
  }

  // bitsandbytes MatMul4Bit (autograd/_functions.py, 0.41-0.45): F.dequantize_4bit(B, state)
  // allocates the weight in quant_state.dtype and .to(A.dtype) a second copy while the first is
  // still referenced; the first dies when .to() returns, the second after the matmul (forward:
  // once the output exists; backward: once grad_A does). Returns the copy the matmul reads.
  Held dequantize(double bytes, unsigned copies) {
    if (!(bytes > 0)) return {};
    Held w = take(bytes);
    if (copies < 2) return w;
    Held c = take(bytes);
    drop(w);
    return c;
  }

  // One layer's forward: storages in creation order; with `keep_saved` a saved storage stays
  // (returned), any other dies as soon as the next storage exists (its consumer ran). A 4-bit
  // linear's output is preceded by its weight's dequantization, dropped once it exists.
  std::vector<Held> layer_forward(const StepShape& s, bool keep_saved, double min_block,
                                  unsigned dequant_copies) {
    std::vector<Held> kept;
    Held pending;
    for (const auto& b : s.layer) {
      Held w = dequantize(b.dequant, dequant_copies);
      if (b.bytes < min_block) {
        drop(w);
        continue;
      }
      Held h = take(b.bytes);
      drop(w);
      drop(pending);
      if (keep_saved && b.saved)
        kept.push_back(h);
      else
        pending = h;
    }
    drop(pending);
    return kept;
  }
};

}  // namespace

ReplayResult replay_training(const ReplayModel& m, const std::vector<StepShape>& steps,
                             const AllocatorConfig& config) {
  Replayer r(config);
  std::vector<Held> params;
  {
    Held source;
    std::uint32_t left = 0;
    for (std::size_t i = 0; i < m.params.size(); ++i) {
      if (i < m.load_sources.size() && m.load_sources[i].spans > 0) {
        source = r.take(static_cast<double>(m.load_sources[i].bytes));
        left = m.load_sources[i].spans;
      }
      params.push_back(r.take(static_cast<double>(m.params[i])));
      if (left > 0 && --left == 0) r.drop(source);
    }
    r.drop(source);
  }
  std::vector<Held> adapters = r.take_all(m.adapters);
  std::vector<Held> workspaces;
  bool workspaces_made = false;
  std::vector<Held> states;
  bool states_made = false;
  const std::uint64_t L = std::max<std::uint64_t>(m.layers, 1);
  const double min_block = static_cast<double>(m.min_layer_block);

  for (const StepShape& s : steps) {
    Held inputs = r.take(s.inputs);
    Held stem = r.take(s.hidden);
    Held stem_extra = r.take(s.stem_extra);
    Held rope = r.take(s.rope);
    if (!workspaces_made)
      for (auto& w : r.take_all(m.forward_workspaces)) workspaces.push_back(w);

    // Forward: each layer's input is the previous layer's output.
    std::vector<std::vector<Held>> saved(L);
    std::vector<Held> layer_inputs(L);
    // The stem output (layer 0's input) lives through the step either way: the embedding's
    // backward, or the leaf that enable_input_require_grads made of it, keeps it.
    layer_inputs[0] = stem;
    Held x = stem;
    const bool keep_input = m.checkpointing || s.layer_saves_input;
    for (std::uint64_t l = 0; l < L; ++l) {
      saved[l] = r.layer_forward(s, !m.checkpointing, min_block, m.dequant_copies);
      Held out = r.take(s.hidden);
      if (l > 0) {
        if (keep_input)
          layer_inputs[l] = x;
        else
          r.drop(x);
      }
      x = out;
    }
    Held final_saved = r.take(s.final_saved);
    Held h_out = x;
    Held head_copy = r.take(s.head_copy);
    Held loss_saved;
    if (s.loss_forward_blocks.empty()) {
      loss_saved = r.take(s.loss_saved);
      Held t = r.take(s.loss_forward);
      r.drop(t);
    } else {
      // The loss's own order: its transients (the logits and their copies), then what it keeps
      // (allocated last: log_softmax's output), then the transients die with their names.
      std::vector<Held> transients;
      r.take_loss_blocks(s.loss_forward_blocks, transients);
      loss_saved = r.take(s.loss_saved);
      r.drop_all(transients);
    }

    // Backward: the loss, then the head (its gradients), then the layers top-down.
    if (!workspaces_made)
      for (auto& w : r.take_all(m.backward_workspaces)) workspaces.push_back(w);
    workspaces_made = true;
    if (s.loss_backward_blocks.empty()) {
      Held t = r.take(s.loss_backward);
      r.drop(t);
    } else {
      std::vector<Held> transients;
      r.take_loss_blocks(s.loss_backward_blocks, transients, &loss_saved, s.loss_saved_freed_after);
      r.drop_all(transients);
    }
    r.drop(loss_saved);
    std::vector<Held> grads = r.take_all(m.head_grads);
    r.drop(head_copy);
    Held grad = r.take(s.hidden);
    r.drop(final_saved);
    r.drop(h_out);
    const std::uint64_t layer_grad_bytes = [&] {
      std::uint64_t t = 0;
      for (const auto g : m.layer_grads) t += g;
      return t;
    }();
    for (std::uint64_t l = L; l-- > 0;) {
      Held recomputed_out;
      if (m.checkpointing) {
        saved[l] = r.layer_forward(s, true, min_block, m.dequant_copies);
        recomputed_out = r.take(s.hidden);
      }
      for (auto& g : r.take_all(m.layer_grads)) grads.push_back(g);
      // MatMul4Bit.backward: grad_A = grad @ dequantize_4bit(B).to(dtype).t(), each 4-bit linear
      // in reverse order, one weight at a time (the working set below holds the gradients).
      for (auto it = s.layer.rbegin(); it != s.layer.rend(); ++it) {
        Held w = r.dequantize(it->dequant, m.dequant_copies);
        r.drop(w);
      }
      {
        const double working =
            s.layer_backward_peak - 2 * s.hidden - static_cast<double>(layer_grad_bytes);
        Held t = r.take(working);
        r.drop(t);
      }
      Held grad_in = r.take(s.hidden);
      r.drop(grad);
      grad = grad_in;
      r.drop_all(saved[l]);
      r.drop(recomputed_out);
      if (l > 0) r.drop(layer_inputs[l]);
    }
    for (auto& g : r.take_all(m.stem_grads)) grads.push_back(g);
    r.drop(grad);
    Held leaf = r.take(s.leaf_grad);
    r.drop(layer_inputs[0]);
    r.drop(stem_extra);
    r.drop(rope);

    // optimizer.step(): states at the first step (zeros_like per parameter), its temporaries.
    if (!states_made) {
      states = r.take_all(m.states);
      states_made = true;
    }
    std::vector<Held> temps = r.take_all(m.step_temps);
    r.drop_all(temps);
    // zero_grad(set_to_none=True): the gradients go; the batch goes.
    r.drop_all(grads);
    r.drop(leaf);
    r.drop(inputs);
  }
  (void)params;
  (void)adapters;
  ReplayResult out;
  out.peak_reserved = r.alloc.peak_reserved_bytes();
  out.peak_allocated = r.alloc.peak_allocated_bytes();
  out.peak_requested = r.alloc.peak_requested_bytes();
  out.segments = r.alloc.segments();
  out.out_of_memory = r.alloc.out_of_memory();
  out.alloc_retries = r.alloc.alloc_retries();
  return out;
}

}  // namespace sparkops::plan::reference
