// LitGPT's fine-tune step (the `litgpt` preset), each mechanism counted by hand from the code it
// follows (src/plan/autograd_sim*.cpp and docs/estimator.md "Framework presets" name the
// versions): the fused qkv that v's view keeps, zero_pad's index_copy source, Fabric's fp32
// outputs, and the loop's two forward high points. tools/memtrace/memtrace/litgpt.py traces the
// same step on torch (ctest memtrace_litgpt_agreement).

#include <gtest/gtest.h>

#include "plan/autograd_sim.hpp"
#include "plan/estimator.hpp"
#include "plan/frameworks.hpp"
#include "plan_fixtures.hpp"

namespace sparkops::plan {
namespace {

constexpr double kBatch = 1, kSeq = 512, T = kBatch * kSeq;

SimRun litgpt_run(TrainMethod method) {
  SimRun run;
  run.method = method;
  run.batch = static_cast<std::uint64_t>(kBatch);
  run.seq = static_cast<std::uint64_t>(kSeq);
  run.loss = LossPath::chunked;
  run.ckpt = Checkpointing::none;
  run.attn = AttnKernel::sdpa;
  run.model_bytes = 2;
  run.adapter_bytes = 2;
  run.lora_rank = 8;
  run.all_linear = false;
  run.targets = {"q_proj", "v_proj"};
  run.prev_graph_held = true;
  run.fused_qkv_lora = true;
  return run;
}

double activations(const models::Architecture& a, const SimRun& run) {
  auto r = simulate_step(a, run);
  EXPECT_TRUE(r.has_value());
  return r ? r->activations : 0;
}

// model.py CausalSelfAttention: with as many query groups as heads, v is a view of the fused qkv
// output, and the attention kernel that saves v keeps all of it: (q + kv) bytes a token more per
// layer than separate q/k/v projections. A grouped layout copies v in expand + reshape: nothing.
TEST(LitGptStep, MultiHeadVKeepsTheWholeFusedQkv) {
  const auto a = fixtures::shape("Llama-2-7B").arch;  // 32 heads, 32 query groups
  SimRun fused = litgpt_run(TrainMethod::full), split = fused;
  split.fused_qkv_lora = false;
  const double q = static_cast<double>(a.heads * a.head_dim);
  const double kv = static_cast<double>(a.kv_heads * a.head_dim);
  EXPECT_DOUBLE_EQ(activations(a, fused) - activations(a, split),
                   static_cast<double>(a.layers) * T * (q + kv) * 2);
  const auto g = fixtures::shape("Llama-3.1-8B").arch;  // 32 heads, 8 groups: v is a copy
  EXPECT_DOUBLE_EQ(activations(g, fused) - activations(g, split), 0);
}

// lora.py LoRAQKVLinear.zero_pad: with q and v adapted (not k), index_copy(_) scatters lora_B's
// (q + v)-wide output into a zero-filled qkv tensor and keeps that source for its backward.
// Adapting k too skips zero_pad and adds only k's share of lora_A's output (r a token).
TEST(LitGptStep, ZeroPadKeepsTheAdaptedPartsWhenNotAllOfQkvAreAdapted) {
  const auto a = fixtures::shape("Llama-2-7B").arch;
  SimRun qv = litgpt_run(TrainMethod::lora), qkv = qv;
  qkv.targets = {"q_proj", "k_proj", "v_proj"};
  const double q = static_cast<double>(a.heads * a.head_dim);
  const double kv = static_cast<double>(a.kv_heads * a.head_dim);
  EXPECT_DOUBLE_EQ(activations(a, qv) - activations(a, qkv),
                   static_cast<double>(a.layers) * T * ((q + kv) - 8) * 2);
}

// lightning fabric/wrappers.py _FabricModule.forward: convert_output hands the logits back in
// fp32, so the chunked loss's logits and log-softmax (kept) are fp32, and so are the logits the
// loop's `logits` name holds through backward and into the next forward.
TEST(LitGptStep, FabricOutputsMakeTheLossFp32) {
  const auto a = fixtures::shape("Llama-3.2-1B").arch;
  SimRun bf16 = litgpt_run(TrainMethod::lora), fp32 = bf16;
  fp32.outputs_fp32 = true;
  auto lo = simulate_step(a, bf16), hi = simulate_step(a, fp32);
  ASSERT_TRUE(lo && hi);
  const double V = static_cast<double>(a.vocab);
  // Kept: log-softmax and the held logits, 4 bytes each instead of 2.
  EXPECT_DOUBLE_EQ(hi->loss - lo->loss, 2 * (4 - 2) * V * T);
  EXPECT_DOUBLE_EQ(hi->prev_graph - lo->prev_graph, (4 - 2) * V * T);
  // Forward: at the conversion the previous step's fp32 logits, this step's bf16 chunks and
  // their fp32 copies (10 V a token beside the activations); at the loss 8 V.
  EXPECT_DOUBLE_EQ(hi->forward_peak_extra,
                   std::max(hi->activations + hi->prev_graph + (2 + 4) * V * T,
                            hi->activations + 8 * V * T + 8 * T));
}

// finetune/lora.py fit(): `loss` is a float after every backward (log_interval 1), so the
// previous graph lives only through `logits`, until the forward returns: the loss's peak has
// the previous step's logits gone, the head's has them.
TEST(LitGptStep, PreviousLogitsAreGoneAtTheLoss) {
  const auto a = fixtures::shape("Llama-3.2-1B").arch;
  const SimRun run = litgpt_run(TrainMethod::lora);
  auto r = simulate_step(a, run);
  ASSERT_TRUE(r);
  const double V = static_cast<double>(a.vocab);
  // bf16, one sequence (no shifted-chunk copy): head = activations + previous logits + this
  // step's logits; loss = activations + logits + log-softmax + labels.
  EXPECT_DOUBLE_EQ(r->prev_graph, 2 * V * T);
  EXPECT_DOUBLE_EQ(r->forward_peak_extra, std::max(r->activations + r->prev_graph + 2 * V * T,
                                                   r->activations + 4 * V * T + 8 * T));
}

// finetune/full.py fit(): `logits = model(input_ids)` (one lm_head call, no lm_head_chunk_size),
// Fabric's fp32 copy, then chunked_cross_entropy(logits[..., :-1, :], ...): with b > 1 the shifted
// rows' reshape is a copy, each 128-row chunk keeps its fp32 log-softmax. Backward: split's cat of
// the rows' gradient, then slice's zero-filled full gradient, beside the loop's logits.
TEST(LitGptStep, FullFineTuneLossRunsOnTheWholeHead) {
  const auto a = fixtures::shape("Llama-3.2-1B").arch;
  SimRun run = litgpt_run(TrainMethod::full);
  run.batch = 2;
  run.outputs_fp32 = true;
  run.whole_head = true;
  auto r = simulate_step(a, run);
  ASSERT_TRUE(r);
  const double V = static_cast<double>(a.vocab), T2 = 2 * kSeq, rows = T2 - 2;
  // Kept through backward: the loop's fp32 logits, every chunk's log-softmax, nll_loss's targets.
  EXPECT_DOUBLE_EQ(r->loss, 4 * V * T2 + 4 * V * rows + 8 * rows);
  EXPECT_DOUBLE_EQ(r->prev_graph, 4 * V * T2);
  // Forward: at the conversion the previous fp32 logits, the bf16 output and its fp32 copy; at the
  // loss the logits, the reshape's copy and the log-softmax.
  EXPECT_DOUBLE_EQ(r->forward_peak_extra,
                   std::max(r->activations + r->prev_graph + (2 + 4) * V * T2,
                            r->activations + 4 * V * T2 + 2 * 4 * V * rows + 8 * rows));
  // Backward at slice_backward: the log-softmax gone, the rows' gradient (its bytes) and the
  // full one above what was kept.
  EXPECT_DOUBLE_EQ(r->loss_backward_transient, 4 * V * T2);
}

TEST(LitGptStep, PresetRunsTheWholeHeadForAFullFineTuneOnly) {
  for (const Method m : {Method::full, Method::lora, Method::qlora}) {
    RunConfig run;
    run.method = m;
    apply_framework(Framework::litgpt, run);
    EXPECT_EQ(run.whole_head, m == Method::full);
  }
}

TEST(LitGptStep, PresetSetsFabricOutputs) {
  RunConfig run;
  apply_framework(Framework::litgpt, run);
  EXPECT_TRUE(run.outputs_fp32);
  RunConfig hf;
  apply_framework(Framework::hf, hf);
  EXPECT_FALSE(hf.outputs_fp32);
}

}  // namespace
}  // namespace sparkops::plan
