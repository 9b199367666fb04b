// A full fine-tune stepped inside the backward (torchtune optimizer_in_bwd, its one-GPU full
// recipes' default): no set of gradients, no step phase; and torchtune's chunked head summing its
// weight's gradient in the engine's input buffer. Llama-3.1-8B (untied, V = 128256, h = 4096,
// bf16) at 2 x 2048 tokens.

#include <gtest/gtest.h>

#include "plan/autograd_sim.hpp"
#include "plan/frameworks.hpp"
#include "plan/plan_args.hpp"
#include "plan_fixtures.hpp"

namespace sparkops::plan {
namespace {

constexpr double V = 128256, H = 4096, T = 2 * 2048;

SimResult simulate(bool stepped) {
  SimRun run;
  run.method = TrainMethod::full;
  run.batch = 2;
  run.seq = 2048;
  run.loss = LossPath::chunked_output;
  run.compiled = true;
  run.grads_stepped = stepped;
  return fixtures::simulated("Llama-3.1-8B", run);
}

// The head's backward is the peak: what the layers keep, the compiled loss's row statistics and
// target, the logits' model-dtype gradients, h's gradient, and the head weight's gradient twice
// (the running sum in the input buffer and the next chunk's, InputBuffer::accumulate adding in
// place).
TEST(OptimizerInBackward, TheChunkedHeadHoldsTwoWeightGradientsAtItsBackward) {
  const SimResult s = simulate(true);
  EXPECT_DOUBLE_EQ(s.backward_peak_extra,
                   s.activations + 16 * T + 2 * V * T + H * 2 * T + 2 * V * H * 2);
}

// Stepped, no layer's gradients accumulate below the head: the backward peak is lower than with
// the step after the backward, which holds every layer's gradients by the bottom layer.
TEST(OptimizerInBackward, NoGradientSetBuildsUpInTheBackward) {
  EXPECT_LT(simulate(true).backward_peak_extra, simulate(false).backward_peak_extra);
}

PlanArgs torchtune_full() {
  PlanArgs a;
  a.model = "Llama-3.1-8B";
  a.framework = "torchtune";
  a.method = "full";
  a.batch = "2";
  return a;
}

// torchtune's one-GPU full recipes: PagedAdamW8bit stepped in backward; several GPUs, or an
// explicit off, keep the step after the backward; LoRA and accumulation refuse it.
TEST(OptimizerInBackward, TheTorchtunePresetStepsInBackwardOnOneGpu) {
  auto one = plan_input(torchtune_full());
  ASSERT_TRUE(one.has_value());
  EXPECT_TRUE(one->run.optimizer_in_backward);
  EXPECT_EQ(one->run.optim, Optim::paged_adamw8bit);
  const Estimate e = estimate(fixtures::shape("Llama-3.1-8B"), one->run);
  EXPECT_EQ(e.terms.gradients, 0u);

  PlanArgs eight = torchtune_full();
  eight.gpus = "8";
  EXPECT_FALSE(plan_input(eight)->run.optimizer_in_backward);
  EXPECT_EQ(plan_input(eight)->run.optim, Optim::adamw);

  PlanArgs off = torchtune_full();
  off.optimizer_in_bwd = "off";
  auto stepped_after = plan_input(off);
  ASSERT_TRUE(stepped_after.has_value());
  EXPECT_FALSE(stepped_after->run.optimizer_in_backward);
  const Estimate after = estimate(fixtures::shape("Llama-3.1-8B"), stepped_after->run);
  // The step after the backward holds every gradient (8.03B x 2 bytes) beside the states.
  EXPECT_GT(after.train_peak_allocated_bytes, e.train_peak_allocated_bytes + 10'000'000'000ULL);

  PlanArgs lora = torchtune_full();
  lora.method = "lora";
  lora.optimizer_in_bwd = "on";
  EXPECT_FALSE(plan_input(lora).has_value());
  PlanArgs accum = torchtune_full();
  accum.optimizer_in_bwd = "on";
  accum.grad_accum = "4";
  EXPECT_FALSE(plan_input(accum).has_value());
  PlanArgs bad = torchtune_full();
  bad.optimizer_in_bwd = "yes";
  auto r = plan_input(bad);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().detail.find("--optimizer-in-bwd"), std::string::npos);
}

}  // namespace
}  // namespace sparkops::plan
