#pragma once
// The loss paths of the step walk (autograd_sim.cpp): what each path's code allocates and keeps
// from the head's logits through the loss's backward. Internal to the activation model:
// autograd_sim.hpp is the public interface.

#include <vector>

#include "plan/autograd_sim.hpp"
#include "plan/autograd_sim_families.hpp"
#include "plan/autograd_sim_graph.hpp"

namespace sparkops::plan::sim {

// Bytes at the run's token count. The head's weight copies, LoRA and dequantized weight are not
// in it (the walk adds them).
struct LossForm {
  double saved = 0;         // what autograd keeps from the loss until the loss's backward
  double forward = 0;       // the forward's high point from the logits through the loss (>= saved)
  double backward = 0;      // the loss backward's high point (>= saved)
  double output_freed = 0;  // of `saved`: what the loss's backward frees before the head's
  // An fp32 gradient of the logits alive beside the model-dtype one at the head's backward.
  double logits_grad32 = 0;
  // The tensors one by one for the allocator replay (SimResult::LossBlock); empty: the replay
  // takes each phase's working set as one block.
  std::vector<SimResult::LossBlock> forward_blocks, backward_blocks;
  int saved_freed_after = -1;  // SimResult::loss_saved_freed_after
};

// The run's loss path at T tokens in the model dtype's `db` bytes; `lb`: the bytes a logit has as
// the loss receives it (Fabric's fp32 outputs on LitGPT's chunked loss, else db).
LossForm loss_form(const Family& f, const Dims& d, const SimRun& run, double T, unsigned db,
                   double lb);

}  // namespace sparkops::plan::sim
