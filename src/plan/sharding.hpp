#pragma once
// Data-parallel sharding: what one rank holds of the weights, gradients and optimizer states when
// a run spans several GPUs or machines, by what the framework's sharding code keeps — what is
// sharded, what is gathered and when — not weights / N. docs/estimator.md "Sharding" sources
// each rule (torch.distributed.fsdp, torch.nn.parallel.DistributedDataParallel,
// deepspeed.runtime.zero, Megatron-Core's distributed optimizer).
//
// Pure; bytes everywhere.

#include <cstdint>
#include <string_view>

#include "base/result.hpp"
#include "plan/estimator.hpp"

namespace sparkops::plan {

std::string_view shard_name(ShardMode m);           // "ddp", "fsdp", "zero1", "zero2", "zero3"
Result<ShardMode> parse_shard(std::string_view s);  // Error names --shard

// The unsharded terms of the run (what one GPU would hold alone), plus the sizes the sharding
// rules need. Every *_bytes is the whole model's.
struct ShardInput {
  std::uint64_t ranks = 1;     // nodes x gpus per node
  double weights = 0;          // frozen + trainable weights as stored (NF4 packed for QLoRA)
  double adapter = 0;          // LoRA A/B weights
  double gradients = 0;        // one gradient per trainable parameter, in its dtype
  double optimizer = 0;        // optimizer states
  double master = 0;           // fp32 master copy (mixed precision / Megatron main params)
  double layer_weights = 0;    // one decoder layer's weights as stored (an FSDP unit)
  double root_weights = 0;     // embedding + lm_head + final norm (FSDP's root unit)
  double largest_module = 0;   // the largest single module's weights (ZeRO-3 gathers per module)
  double layer_grads = 0;      // one decoder layer's trainable gradients
  double trainable = 0;        // trainable parameters (count)
  double grad_elem_bytes = 2;  // bytes of one gradient element (reduce buckets)
  double hidden = 0;           // hidden size (HF's "auto" DeepSpeed bucket sizes)
  bool no_sync = false;        // FSDP accumulation under no_sync (grad_accum > 1 and the framework)
  // FSDP MixedPrecision(param_dtype): the gathered (unsharded) flat parameters are in the compute
  // dtype, the local shards in the stored one: compute bytes / stored bytes (0.5 for fp32 weights
  // gathered in bf16, Accelerate's mixed_precision: bf16).
  double gather_ratio = 1;
};

// What one rank holds. `weights` includes the gathered units; `gradients` the communication
// buckets; `reduce_transient` is the backward's extra for the reduce of one unit.
struct ShardTerms {
  double weights = 0;
  double adapter = 0;
  double gradients = 0;
  double optimizer = 0;
  double master = 0;
  double gathered = 0;          // of `weights`: the all-gathered units
  double buckets = 0;           // of `gradients`: DDP buckets / DeepSpeed reduce buffers
  double reduce_transient = 0;  // one unit's full gradient before its reduce-scatter
  double step_transient = 0;    // at the optimizer step (DeepSpeed's fp32 gradient partition)
  // What the optimizer step finds of `weights` and `gradients` (FSDP: every unit resharded and
  // the gradients reduce-scattered by the synced micro-batch's backward, no_sync or not); equal
  // to them in the other modes.
  double step_weights = 0;
  double step_gradients = 0;
};

// One rank's terms under `mode`; ranks == 1 returns the input unchanged (every mode).
ShardTerms shard_terms(ShardMode mode, const ShardInput& in);

}  // namespace sparkops::plan
