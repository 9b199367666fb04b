#include "plan/step_replay.hpp"

#include <algorithm>
#include <cmath>

namespace sparkops::plan {

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
  // Takes each of `sizes` in order, appending to `out`.
  void take_into(const std::vector<std::uint64_t>& sizes, std::vector<Held>& out) {
    for (const auto sz : sizes) out.push_back(take(static_cast<double>(sz)));
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
  // (appended to `kept`), any other dies as soon as the next storage exists (its consumer ran). A
  // 4-bit linear's output is preceded by its weight's dequantization, dropped once it exists.
  void layer_forward(const StepShape& s, bool keep_saved, double min_block, unsigned dequant_copies,
                     std::vector<Held>& kept) {
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
  std::vector<Held> saved;
  std::vector<std::size_t> saved_at;
  std::vector<Held> layer_inputs;
  std::vector<Held> offload_buffers;  // persistent: the replay ends with them
  double offload_buffer_bytes = 0;
  std::size_t step_index = 0;

  for (const StepShape& s : steps) {
    Held inputs = r.take(s.inputs);
    Held stem = r.take(s.hidden);
    Held stem_extra = r.take(s.stem_extra);
    Held rope = r.take(s.rope);
    if (!workspaces_made) r.take_into(m.forward_workspaces, workspaces);

    // Forward: each layer's input is the previous layer's output. Layer l's saved storages are
    // saved[saved_at[l], saved_at[l + 1]) (one list for all layers: no allocation per layer).
    saved.clear();
    saved_at.assign(L + 1, 0);
    layer_inputs.assign(L, Held{});
    // The stem output (layer 0's input) lives through the step either way: the embedding's
    // backward, or the leaf that enable_input_require_grads made of it, keeps it.
    layer_inputs[0] = stem;
    Held x = stem;
    const bool keep_input = m.checkpointing || s.layer_saves_input;
    const std::uint64_t stash = m.checkpointing ? m.offload_stash : 0;
    const bool keep_last = m.offload_keeps_last && step_index > 0;
    if (stash > 0 && m.offload_buffers > 0 && s.hidden > offload_buffer_bytes) {
      r.drop_all(offload_buffers);
      for (std::uint64_t k = 0; k < m.offload_buffers; ++k)
        offload_buffers.push_back(r.take(s.hidden));
      offload_buffer_bytes = s.hidden;
    }
    for (std::uint64_t l = 0; l < L; ++l) {
      r.layer_forward(s, !m.checkpointing, min_block, m.dequant_copies, saved);
      saved_at[l + 1] = saved.size();
      Held out = r.take(s.hidden);
      if (l > 0) {
        if (keep_input)
          layer_inputs[l] = x;
        else
          r.drop(x);
      }
      // Offloaded: an input leaves the device once `stash` later ones were packed.
      if (stash > 0 && l > stash) r.drop(layer_inputs[l - stash]);
      x = out;
    }
    // The inputs still stashed leave once the final norm's saved tensors have been packed.
    if (stash > 0)
      for (std::uint64_t l = L > stash ? L - stash : 1; l < L - (keep_last ? 1 : 0); ++l)
        r.drop(layer_inputs[l]);
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
    if (!workspaces_made) r.take_into(m.backward_workspaces, workspaces);
    workspaces_made = true;
    // Stepped in backward: the first step's hooks make the states as the gradients arrive (all
    // taken here, before the first gradient: the next step holds them all from its start).
    if (m.step_in_backward && !states_made) {
      states = r.take_all(m.states);
      states_made = true;
    }
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
    if (m.step_in_backward) r.drop_all(grads);
    r.drop(head_copy);
    Held grad = r.take(s.hidden);
    r.drop(final_saved);
    r.drop(h_out);
    const std::uint64_t layer_grad_bytes = [&] {
      std::uint64_t t = 0;
      for (const auto g : m.layer_grads) t += g;
      return t;
    }();
    Held brought_back;  // the previous layer's input, freed when the next is brought back
    for (std::uint64_t l = L; l-- > 0;) {
      // Brought back from the host before the layer's recompute (into a persistent buffer, or
      // a new tensor).
      if (stash > 0 && l > 0 && m.offload_buffers == 0) {
        layer_inputs[l] = r.take(s.hidden);
        r.drop(brought_back);
        brought_back = Held{};
      }
      Held recomputed_out;
      // Under checkpointing the forward kept nothing: the recomputed layer's storages go at the
      // list's end and are dropped below, before the next (lower) layer recomputes.
      const std::size_t saved_from = m.checkpointing ? saved.size() : saved_at[l];
      if (m.checkpointing) {
        r.layer_forward(s, true, min_block, m.dequant_copies, saved);
        recomputed_out = r.take(s.hidden);
      }
      const std::size_t saved_to = m.checkpointing ? saved.size() : saved_at[l + 1];
      r.take_into(m.layer_grads, grads);
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
      for (std::size_t i = saved_from; i < saved_to; ++i) r.drop(saved[i]);
      if (m.checkpointing) saved.resize(saved_from);
      r.drop(recomputed_out);
      if (m.step_in_backward) r.drop_all(grads);  // this layer's, stepped by their hooks
      if (stash > 0 && l > 0 && m.offload_buffers == 0)
        brought_back = layer_inputs[l];
      else if (l > 0)
        r.drop(layer_inputs[l]);
    }
    r.drop(brought_back);
    r.take_into(m.stem_grads, grads);
    if (m.step_in_backward) r.drop_all(grads);
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
    ++step_index;
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

}  // namespace sparkops::plan
