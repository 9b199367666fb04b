#pragma once
// Replays the allocations and frees of training steps through the caching-allocator model, so
// the reserved peak (torch.cuda.max_memory_reserved) comes from the allocator's rules applied to
// the tensors the estimator knows, in the order a training step creates and releases them
// (docs/estimator.md "The caching allocator" lists the order and what each step holds):
//
//   load: every parameter tensor, then the adapters; the cuBLAS workspace of the forward thread
//   at the first matmul and of the autograd thread at the first backward matmul;
//   per step: inputs; the stem; each layer's storages in forward order (a saved one stays until
//   that layer's backward, any other dies when the next one exists; under checkpointing nothing
//   but the layer's input stays and backward recomputes the layer first); the final norm, the
//   loss's saved and transient blocks; the loss backward; the layers in reverse (parameter
//   gradients, the layer's backward working set, its input's gradient, its saved set released);
//   the optimizer states at the first step, the step's temporaries; zero_grad(set_to_none).

#include <cstdint>
#include <vector>

#include "plan/autograd_sim.hpp"
#include "plan/caching_allocator.hpp"

namespace sparkops::plan {

// What one micro-batch allocates, at its own token count (from simulate_step at that count).
struct StepShape {
  double hidden = 0;      // one hidden-state tensor (b·s·h in the model dtype)
  double inputs = 0;      // input_ids + labels
  double rope = 0;        // cos and sin together (0 without rotary)
  double stem_extra = 0;  // the embedding's scaled/positioned copy kept by autograd
  std::vector<SimResult::LayerBlock> layer;  // a middle layer's storages, forward order
  double layer_backward_peak = 0;
  bool layer_saves_input = false;
  double final_saved = 0;    // what the final norm keeps
  double loss_saved = 0;     // what the loss path keeps until backward
  double head_copy = 0;      // a weight-sized copy the head keeps to its backward (NormHead)
  double loss_forward = 0;   // the loss forward's transient above loss_saved
  double loss_backward = 0;  // the loss backward's transient above loss_saved
  // The same tensor by tensor, when the loss path lists them (SimResult::LossBlock): then the
  // replay follows these instead of the two figures above.
  std::vector<SimResult::LossBlock> loss_forward_blocks, loss_backward_blocks;
  int loss_saved_freed_after = -1;  // SimResult::loss_saved_freed_after
  double leaf_grad = 0;             // .grad of the embedding output made a leaf (checkpointed PEFT)
};

// What the model holds and what backward/optimizer create, tensor by tensor (bytes).
struct ReplayModel {
  std::vector<std::uint64_t> params;  // every base parameter tensor, in load order
  // Per parameter (empty or params' size): a transient taken just before it and dropped after
  // the `spans` parameters made from it. bitsandbytes Params4bit.cuda quantizes each weight from
  // a 16-bit copy on the device: its packed data and absmax are allocated while that copy lives.
  struct LoadSource {
    std::uint64_t bytes = 0;
    std::uint32_t spans = 0;
  };
  std::vector<LoadSource> load_sources;
  std::vector<std::uint64_t> adapters;     // LoRA A/B
  std::vector<std::uint64_t> layer_grads;  // parameter gradients one layer's backward creates
  std::vector<std::uint64_t> head_grads;   // at the loss backward (lm_head, final norm)
  std::vector<std::uint64_t> stem_grads;   // after the last layer (embedding)
  std::vector<std::uint64_t> states;       // optimizer states, created at the first step
  std::vector<std::uint64_t> step_temps;   // optimizer.step() temporaries (foreach lists)
  // cuBLAS/cuBLASLt workspaces, one per (handle, stream): the forward thread's at the first
  // matmul, the autograd thread's at the first backward matmul; both live for the process.
  std::vector<std::uint64_t> forward_workspaces, backward_workspaces;
  std::uint64_t layers = 0;
  bool checkpointing = false;
  // > 0: the checkpointed layer inputs are offloaded as the forward saves them
  // (RunConfig::offload_kind): each leaves the device once this many later inputs were saved,
  // the rest after the last layer. Layer 0's input (the embedding output) stays as without
  // offloading. The backward brings each back before its layer's recompute: into a new tensor,
  // freed when the next layer brings its own (torchtune), or into one of `offload_buffers`
  // persistent blocks, made at the first offload and remade when a larger input comes
  // (Unsloth's GPU_BUFFERS).
  std::uint64_t offload_stash = 0;
  std::uint64_t offload_buffers = 0;
  bool offload_keeps_last = false;  // from the second step the last layer's input stays (Unsloth)
  // The optimizer steps each parameter in the backward (RunConfig::optimizer_in_backward): the
  // states are made at the first step's backward, and every gradient is freed right after the
  // node that made it (its post-accumulate-grad hook ran step() and zero_grad()).
  bool step_in_backward = false;
  // Full-size dequantized copies a 4-bit linear's call allocates (SimRun::dequant_copies): the
  // quant_state dtype, then its .to(compute dtype) while the first is alive.
  unsigned dequant_copies = 1;
  // Layer storages below this size are left out of the per-layer replay (the small pool's 2 MiB
  // segments hold them; their reserve is a few MiB at most).
  std::uint64_t min_layer_block = 0;
};

struct ReplayResult {
  std::uint64_t peak_reserved = 0;   // max_memory_reserved
  std::uint64_t peak_allocated = 0;  // max_memory_allocated (rounded blocks)
  std::uint64_t peak_requested = 0;  // the bytes asked for, at their peak
  std::uint64_t segments = 0;
  bool out_of_memory = false;  // some request found no room within the capacity
  // Cache releases a segment beyond the capacity forced (CachingAllocator::alloc_retries).
  std::uint64_t alloc_retries = 0;
};

// Loads the model, then runs one step per shape, in order (the first creates the optimizer
// states). Steps of one shape repeated give the steady state of fixed-length batches; a rising
// sequence of shapes the caching allocator's worst case for varying lengths.
ReplayResult replay_training(const ReplayModel& model, const std::vector<StepShape>& steps,
                             const AllocatorConfig& config = {});

}  // namespace sparkops::plan
