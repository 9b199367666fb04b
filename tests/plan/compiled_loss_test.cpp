// torch.compile over the cross-entropy (plan/autograd_sim_loss.cpp compiled_cross_entropy) on
// Llama-3.1-8B's head (V = 128256, bf16), each term counted by hand: inductor's partitioner keeps
// the model-dtype logits and per-row statistics, and the backward writes one model-dtype gradient.

#include <gtest/gtest.h>

#include "plan/autograd_sim.hpp"
#include "plan_fixtures.hpp"

namespace sparkops::plan {
namespace {

constexpr double V = 128256, T = 2 * 4096;

SimResult simulate(LossPath loss, bool compiled) {
  SimRun run;
  run.method = TrainMethod::lora;
  run.batch = 2;
  run.seq = 4096;
  run.loss = loss;
  run.compiled = compiled;
  return fixtures::simulated("Llama-3.1-8B", run);
}

// torchtune compile_loss: each of the 8 chunks' cross-entropy compiled on its own. The forward
// allocates nothing logits-sized beyond the head's chunks; backward replaces one chunk's logits
// with its gradient at a time (512 rows x 2 sequences).
TEST(CompiledLoss, TorchtuneChunksKeepTheirLogitsAndReplaceThemOneByOne) {
  const SimResult c = simulate(LossPath::chunked_output, true);
  EXPECT_DOUBLE_EQ(c.loss_forward_transient, 0);
  EXPECT_DOUBLE_EQ(c.loss_backward_transient, 2 * V * (4096 / 8) * 2);
  // Eager: every chunk's fp32 log-softmax and the target (4 V + 8 a token) against the bf16
  // logits, the target and the rows' two fp32 statistics (2 V + 16).
  const SimResult e = simulate(LossPath::chunked_output, false);
  EXPECT_DOUBLE_EQ(e.loss - c.loss, (4 * V * T + 8 * T) - (2 * V * T + 16 * T));
}

// transformers Trainer torch_compile: the model's own loss inside the compiled forward. The same
// saved set for every release's program (the shifted fp32 copy is fused away too); the backward's
// one gradient covers the whole batch.
TEST(CompiledLoss, HfLossKeepsTheModelDtypeLogitsWhateverTheRelease) {
  const SimResult hf = simulate(LossPath::hf, true);
  EXPECT_DOUBLE_EQ(hf.loss_backward_transient, 2 * V * T);
  EXPECT_DOUBLE_EQ(hf.loss_forward_transient, 0);
  for (LossPath p : {LossPath::hf_shifted, LossPath::hf_shifted_kept}) {
    const SimResult r = simulate(p, true);
    EXPECT_DOUBLE_EQ(r.loss, hf.loss);
    EXPECT_DOUBLE_EQ(r.backward_peak_extra, hf.backward_peak_extra);
  }
  EXPECT_LT(hf.forward_peak_extra, simulate(LossPath::hf, false).forward_peak_extra);
  EXPECT_LT(hf.backward_peak_extra, simulate(LossPath::hf, false).backward_peak_extra);
}

// Paths whose loss is fused already or computed outside the compiled model stay as they are.
TEST(CompiledLoss, LeavesFusedAndExternalLossesAlone) {
  for (LossPath p : {LossPath::chunked, LossPath::fused, LossPath::fused_unsloth,
                     LossPath::chunked_nll, LossPath::megatron}) {
    const SimResult c = simulate(p, true), e = simulate(p, false);
    EXPECT_DOUBLE_EQ(c.loss, e.loss) << static_cast<int>(p);
    EXPECT_DOUBLE_EQ(c.forward_peak_extra, e.forward_peak_extra) << static_cast<int>(p);
    EXPECT_DOUBLE_EQ(c.backward_peak_extra, e.backward_peak_extra) << static_cast<int>(p);
  }
}

// The memo key tells a compiled run from an eager one.
TEST(CompiledLoss, SimRunKeyCarriesIt) {
  SimRun a, b;
  b.compiled = true;
  EXPECT_NE(sim_run_key(a), sim_run_key(b));
  SimRun c;
  c.inputs_kept = 2;
  EXPECT_NE(sim_run_key(a), sim_run_key(c));
}

}  // namespace
}  // namespace sparkops::plan
