#pragma once
// The terms of one training step as tools/memtrace measures them, predicted from the mechanism
// (autograd_sim + parameter bytes + the optimizer step): the contract the agreement test checks.

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "base/result.hpp"
#include "plan/autograd_sim.hpp"

namespace sparkops::plan {

enum class OptimStep { adamw_foreach, adamw_fused, sgd };

struct StepTerms {
  double weights = 0, adapter = 0, optimizer = 0, gradients = 0, inputs = 0;
  double buffers = 0;  // persistent framework buffers (unsloth_buffer_bytes)
  double activations = 0, loss = 0;
  double forward_peak = 0, backward_peak = 0, optimizer_peak = 0;
  double peak = 0;
};

// Optimizer states: AdamW exp_avg and exp_avg_sq as zeros_like(param) (param dtype). The foreach
// step (torch/optim/adamw.py _multi_tensor_adamw, torch 2.1-2.5) allocates one temporary list
// `torch._foreach_sqrt(exp_avg_sqs)` the size of the group's states; fused (_fused_adamw_) none.
Result<StepTerms> step_terms(const models::Architecture& arch, const SimRun& run, OptimStep optim,
                             bool double_quant);

// The same from a memtrace config object (keys of tools/memtrace/memtrace/run.py).
Result<nlohmann::json> step_terms_from_json(const nlohmann::json& config);

}  // namespace sparkops::plan
