// The fused linear cross-entropy paths on Llama-3.1-8B's head (V = 128256, h = 4096, bf16), each
// term counted by hand from the code it follows (src/plan/autograd_sim.cpp names the versions).

#include <gtest/gtest.h>

#include "plan/autograd_sim.hpp"
#include "plan_fixtures.hpp"

namespace sparkops::plan {
namespace {

constexpr double V = 128256, H = 4096, b = 2, T = 2 * 4096;

SimResult simulate(LossPath loss, TrainMethod method, std::uint64_t seq = 4096) {
  SimRun run;
  run.method = method;
  run.batch = 2;
  run.seq = seq;
  run.loss = loss;
  return fixtures::simulated("Llama-3.1-8B", run);
}

// Liger: chunks of next_power_of_2(ceil(8192 / ceil(128256 / 4096))) = 256 rows; above its
// kept gradients, the padded and shifted int64 labels, fp32 per-row losses, the bool mask, one
// chunk's bf16 logits (overwritten by their gradient) and grad_logits @ weight (256 x h).
TEST(FusedLoss, LigerHoldsOneSmallChunkOfModelDtypeLogits) {
  const SimResult lora = simulate(LossPath::fused, TrainMethod::lora);
  const double rows = 8 * (T + b) + 8 * T + 4 * T + T;
  EXPECT_DOUBLE_EQ(lora.loss_forward_transient, rows + 256 * V * 2 + 256 * H * 2);
  EXPECT_DOUBLE_EQ(lora.loss_backward_transient, 0);  // backward returns the kept gradients
  // A trained head: grad_weight is kept, and `mm(grad_logits.t(), input).float()` holds the
  // bf16 V x h product and its fp32 copy at once.
  const SimResult full = simulate(LossPath::fused, TrainMethod::full);
  EXPECT_DOUBLE_EQ(full.loss_forward_transient, rows + 256 * V * 2 + V * H * (2 + 4));
}

// Unsloth: one chunk of all 8192 rows (the fp32 logits, 3.9 GiB, are below the free memory);
// the chunk's bf16 logits with their gradient written over them, then the input gradient's mm.
TEST(FusedLoss, UnslothHoldsTheWholeBatchAsOneChunk) {
  const SimResult lora = simulate(LossPath::fused_unsloth, TrainMethod::lora);
  EXPECT_DOUBLE_EQ(lora.loss_forward_transient, 8 * T + T * V * 2 + T * H * 2);
  EXPECT_DOUBLE_EQ(lora.loss_backward_transient, 0);
  // A trained head: the chunk's V x h weight gradient in bf16, added into grad_lm_head in place.
  const SimResult full = simulate(LossPath::fused_unsloth, TrainMethod::full);
  EXPECT_DOUBLE_EQ(full.loss_forward_transient, 8 * T + T * V * 2 + V * H * 2);
  EXPECT_GT(lora.loss_forward_transient,
            16 * simulate(LossPath::fused, TrainMethod::lora).loss_forward_transient);
}

// Above 4 GiB of fp32 logits Unsloth chunks (unsloth_zoo 2026.8.13 get_chunk_size, the target
// capped at 4 GiB): 2 x 8192 tokens are 4 x 128256 x 16384 = 7.8 GiB, 1.96 targets, rounded up to
// 4 chunks of 4096 rows.
TEST(FusedLoss, UnslothChunksAboveFourGibOfFp32Logits) {
  const SimResult lora = simulate(LossPath::fused_unsloth, TrainMethod::lora, 8192);
  constexpr double T2 = 2 * 8192, C = 4096;
  EXPECT_DOUBLE_EQ(lora.loss_forward_transient, 8 * T2 + C * V * 2 + C * H * 2);
}

}  // namespace
}  // namespace sparkops::plan
