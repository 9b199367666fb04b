#include "plan/sharding.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace sparkops::plan {

namespace {

constexpr std::pair<std::string_view, ShardMode> kShards[] = {{"ddp", ShardMode::ddp},
                                                              {"fsdp", ShardMode::fsdp},
                                                              {"zero1", ShardMode::zero1},
                                                              {"zero2", ShardMode::zero2},
                                                              {"zero3", ShardMode::zero3}};

}  // namespace

std::string_view shard_name(ShardMode m) {
  for (const auto& [name, value] : kShards)
    if (value == m) return name;
  return "?";
}

Result<ShardMode> parse_shard(std::string_view s) {
  std::string choices;
  for (const auto& [name, value] : kShards) {
    if (s == name) return value;
    if (!choices.empty()) choices += "|";
    choices += name;
  }
  return fail(Errc::invalid_argument,
              fmt::format("--shard: unknown value \"{}\" (one of {})", s, choices));
}

ShardTerms shard_terms(ShardMode mode, const ShardInput& in) {
  ShardTerms t;
  t.weights = in.weights;
  t.adapter = in.adapter;
  t.gradients = in.gradients;
  t.optimizer = in.optimizer;
  t.master = in.master;
  t.step_weights = t.weights;
  t.step_gradients = t.gradients;
  if (in.ranks <= 1) return t;
  const double n = static_cast<double>(in.ranks);
  // HF's "auto" DeepSpeed sizes (transformers integrations/deepspeed.py
  // HfTrainerDeepSpeedConfig.trainer_config_finalize): reduce_bucket_size = hidden^2,
  // stage3_prefetch_bucket_size = 0.9 hidden^2 (elements).
  const double reduce_bucket = in.hidden * in.hidden * in.grad_elem_bytes;
  const double prefetch_bucket = 0.9 * in.hidden * in.hidden * 2.0;
  switch (mode) {
    case ShardMode::ddp:
      // torch/nn/parallel/distributed.py: the Reducer allocates flat buckets (bucket_cap_mb 25,
      // the first 1 MiB) covering every parameter that requires grad; with the default
      // gradient_as_bucket_view=False each .grad is copied into its bucket for the all-reduce,
      // so the buckets are a second copy of the gradients. Everything else is replicated.
      t.buckets = in.gradients;
      t.gradients = in.gradients + t.buckets;
      break;
    case ShardMode::fsdp: {
      // FULL_SHARD, one unit per decoder layer (transformer auto-wrap): every flat parameter
      // keeps its 1/N shard; the root unit (embedding, final norm, lm_head) stays gathered
      // through forward and backward (the root does not reshard after forward); during
      // backward the current layer and the one prefetched (BACKWARD_PRE, at most two
      // all-gathers in flight under limit_all_gathers) are gathered. Under MixedPrecision the
      // unsharded flat parameter is allocated in param_dtype (_flat_param.py
      // _use_unsharded_flat_param / _full_param_padded in the low precision), the local shard
      // stays in the stored dtype.
      t.gathered = in.gather_ratio * (in.root_weights + 2.0 * in.layer_weights);
      t.weights = in.weights / n + t.gathered;
      t.adapter = in.adapter / n;
      // Gradients are reduce-scattered into 1/N shards after each unit's backward; under
      // no_sync accumulation the unsharded gradients accumulate in full instead.
      t.gradients = in.no_sync ? in.gradients : in.gradients / n;
      t.reduce_transient = (in.no_sync ? 0.0 : in.layer_grads) + in.layer_grads / n;
      t.optimizer = in.optimizer / n;
      t.master = in.master / n;
      // The optimizer step runs after the synced micro-batch (the last of a step), whose
      // backward reduce-scatters every unit's gradient, the no_sync micro-batches' unsharded sum
      // included, into a 1/N shard and drops the unsharded one (_runtime_utils.py
      // _post_backward_hook: `flat_param.grad = None`, `_saved_grad_shard`; _finalize_params ->
      // prepare_gradient_for_optim), and reshards every unit, the root too
      // (_should_free_in_backward is true when syncing; _catch_all_reshard): the step sees the
      // local shards and 1/N of the gradients.
      t.step_weights = in.weights / n;
      t.step_gradients = in.gradients / n;
      break;
    }
    case ShardMode::zero1:
      // Megatron-Core distributed optimizer (DeepSpeed stage 1 alike): the fp32 main params and
      // the optimizer states are sharded; parameters and the contiguous gradient buffer stay
      // whole on every rank (the buffer is reduce-scattered in place).
      t.optimizer = in.optimizer / n;
      t.master = in.master / n;
      break;
    case ShardMode::zero2:
    case ShardMode::zero3:
      // deepspeed/runtime/zero/stage_1_and_2.py: parameters replicated; each rank keeps the
      // averaged gradients of its partition and one contiguous reduce bucket
      // (contiguous_gradients, reduce_bucket_size elements); fp32 master partition and states.
      // ZeRO-3 partitions the gradients, states and step the same way.
      t.buckets = reduce_bucket;
      t.gradients = in.gradients / n + t.buckets;
      t.optimizer = in.optimizer / n;
      t.master = in.master / n;
      // step(): the partition's gradients are flattened and cast to fp32 for the update.
      t.step_transient = in.trainable * 4.0 / n;
      if (mode == ShardMode::zero3) {
        // deepspeed/runtime/zero/stage3.py + partition_parameters.py: parameters partitioned;
        // a module's parameters are all-gathered when it runs (the largest single module, the
        // embedding or lm_head, gathered whole) plus the prefetch bucket
        // (stage3_prefetch_bucket_size).
        t.gathered = in.largest_module + prefetch_bucket;
        t.weights = in.weights / n + t.gathered;
        t.adapter = in.adapter / n;
      }
      break;
  }
  if (mode != ShardMode::fsdp) {
    t.step_weights = t.weights;
    t.step_gradients = t.gradients;
  }
  return t;
}

}  // namespace sparkops::plan
