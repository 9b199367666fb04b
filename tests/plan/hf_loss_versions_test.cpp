// The HF loss by transformers release on Llama-3.1-8B's head (V = 128256, bf16, LoRA, batch 2 x
// 4096: T = 8192 tokens, b x (s - 1) = 8190 shifted rows), each tensor counted by hand from the
// code src/plan/autograd_sim.cpp cites: 4.46-4.48 (hf_shifted_kept) against <= 4.45
// (hf_shifted) and >= 4.49 (hf).

#include <gtest/gtest.h>

#include "plan/autograd_sim.hpp"
#include "plan_fixtures.hpp"

namespace sparkops::plan {
namespace {

constexpr double V = 128256, T = 2 * 4096, rows = 2 * 4095;

SimResult simulate(LossPath loss, unsigned model_bytes = 2) {
  SimRun run;
  run.method = TrainMethod::lora;
  run.batch = 2;
  run.seq = 4096;
  run.model_bytes = model_bytes;
  run.loss = loss;
  return fixtures::simulated("Llama-3.1-8B", run);
}

std::vector<double> bytes_of(const std::vector<SimResult::LossBlock>& blocks) {
  std::vector<double> out;
  for (const auto& b : blocks) out.push_back(b.bytes);
  return out;
}

// ForCausalLMLoss 4.46-4.48 beside LlamaForCausalLM's `logits`: the caller's bf16 logits
// (2 V T = 2.10 GB), their fp32 copy (4 V T = 4.20 GB) and the shifted fp32 copy (4 V rows =
// 4.20 GB) are the forward's transients; the log-softmax (4 V rows) and the shifted int64
// target (8 rows) are kept. 14 V a token at the peak, 2 V T (1.96 GiB) above <= 4.45's.
TEST(HfLossVersions, From446To448TheCallersLogitsStayBesideTheShiftedCopy) {
  const SimResult kept = simulate(LossPath::hf_shifted_kept);
  EXPECT_DOUBLE_EQ(kept.loss_forward_transient, 2 * V * T + 4 * V * T + 4 * V * rows);
  EXPECT_EQ(bytes_of(kept.loss_forward_blocks),
            (std::vector<double>{2 * V * T, 4 * V * T, 4 * V * rows}));
  for (const auto& b : kept.loss_forward_blocks) EXPECT_EQ(b.freed_after, -1);  // to the end
  // Backward: nll_loss's gradient and log_softmax's grad input (4 V rows each) beside the kept
  // log-softmax, then slice_backward's zero-filled 4 V T.
  EXPECT_DOUBLE_EQ(kept.loss_backward_transient, 8 * V * rows);
  EXPECT_EQ(bytes_of(kept.loss_backward_blocks),
            (std::vector<double>{4 * V * rows, 4 * V * rows, 4 * V * T}));
  EXPECT_EQ(kept.loss_saved_freed_after, 1);

  const SimResult shifted = simulate(LossPath::hf_shifted);
  // <= 4.45: `logits = logits.float()` in the model drops the bf16 logits once the copy exists.
  EXPECT_DOUBLE_EQ(kept.loss_forward_transient - shifted.loss_forward_transient, 2 * V * T);
  EXPECT_EQ(shifted.loss_forward_blocks.front().freed_after, 1);
  EXPECT_DOUBLE_EQ(kept.forward_peak_extra - shifted.forward_peak_extra, 2 * V * T);
  // What autograd keeps and the backward are the same code in both.
  EXPECT_DOUBLE_EQ(kept.loss, shifted.loss);
  EXPECT_DOUBLE_EQ(kept.loss_backward_transient, shifted.loss_backward_transient);
  EXPECT_DOUBLE_EQ(kept.backward_peak_extra, shifted.backward_peak_extra);

  // >= 4.49: no shifted copy: the forward's transients are the bf16 logits, their fp32 copy and
  // the padded labels (8 (T + b)); the kept set is the log-softmax over all T rows and the
  // shifted labels (4 V T + 8 T). 4.46-4.48's peak is above it by the shifted copy and its
  // log-softmax (8 V rows + 8 rows) less that (8 (T + 2) + 4 V T + 8 T): 1.96 GiB here.
  const SimResult hf = simulate(LossPath::hf);
  EXPECT_DOUBLE_EQ(hf.loss_forward_transient, 2 * V * T + 4 * V * T + 8 * (T + 2));
  EXPECT_DOUBLE_EQ(kept.forward_peak_extra - hf.forward_peak_extra,
                   (4 * V * rows + 4 * V * rows + 8 * rows) - (8 * (T + 2) + 4 * V * T + 8 * T));
}

// In fp32 the upcast is the same tensor (`.float()` returns it): 4.46-4.48 then holds what
// <= 4.45 holds, 12 V a token.
TEST(HfLossVersions, InFp32TheUpcastIsNoCopy) {
  const SimResult kept = simulate(LossPath::hf_shifted_kept, 4);
  const SimResult shifted = simulate(LossPath::hf_shifted, 4);
  EXPECT_EQ(bytes_of(kept.loss_forward_blocks), (std::vector<double>{4 * V * T, 4 * V * rows}));
  EXPECT_DOUBLE_EQ(kept.loss_forward_transient, shifted.loss_forward_transient);
  EXPECT_DOUBLE_EQ(kept.forward_peak_extra, shifted.forward_peak_extra);
}

}  // namespace
}  // namespace sparkops::plan
