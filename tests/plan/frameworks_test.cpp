// Every framework preset sets what its docs/estimator.md row says, and each has that row.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include "models/catalogue.hpp"
#include "plan/frameworks.hpp"
#include "plan_fixtures.hpp"

#include "support/test_support.hpp"

namespace sparkops::plan {
namespace {

using fixtures::shape;

RunConfig preset(Framework f, Method m = Method::lora) {
  RunConfig r;
  r.method = m;
  apply_framework(f, r);
  return r;
}

TEST(FrameworkPresets, HfIsTheTrainerWithPeftDefaults) {
  const RunConfig r = preset(Framework::hf);
  EXPECT_EQ(r.loss, LossKind::hf);
  EXPECT_TRUE(r.adapter_fp32);
  EXPECT_EQ(r.lora_dropout, 0.0);
  EXPECT_EQ(r.grad_ckpt, GradCkpt::full);  // the project's default, untouched by the preset
  EXPECT_TRUE(r.fused_adamw);              // transformers 4.57.6's TrainingArguments, torch >= 2.8
  EXPECT_EQ(r.shard, ShardMode::ddp);
  EXPECT_TRUE(r.fsdp_no_sync);
}

TEST(FrameworkPresets, TrlIsSftConfigDefaults) {
  const RunConfig r = preset(Framework::trl);
  EXPECT_EQ(r.loss, LossKind::chunked_nll);
  EXPECT_EQ(r.grad_ckpt, GradCkpt::full);
  EXPECT_EQ(r.lora_dropout, 0.05);
  EXPECT_TRUE(r.adapter_fp32);
  EXPECT_TRUE(r.fused_adamw);
  EXPECT_EQ(r.shard, ShardMode::ddp);
}

TEST(FrameworkPresets, UnslothOffloadsCheckpointsAndFusesTheLossAtEveryLength) {
  const RunConfig r = preset(Framework::unsloth);
  EXPECT_EQ(r.grad_ckpt, GradCkpt::offload);
  EXPECT_EQ(r.offload_kind, OffloadKind::unsloth);
  EXPECT_EQ(r.loss, LossKind::fused_unsloth);
  EXPECT_EQ(r.fused_loss_above_tokens, 0u);
  EXPECT_TRUE(r.fused_adamw);  // TRL's TrainingArguments on transformers >= 4.54, torch >= 2.8
  EXPECT_EQ(r.lora_dropout, 0.0);
  EXPECT_TRUE(r.adapter_fp32);
}

TEST(FrameworkPresets, AxolotlPicksItsExampleOptimizerByMethod) {
  EXPECT_EQ(preset(Framework::axolotl, Method::lora).optim, Optim::adamw8bit);
  EXPECT_EQ(preset(Framework::axolotl, Method::qlora).optim, Optim::paged_adamw);
  EXPECT_EQ(preset(Framework::axolotl, Method::full).optim, Optim::paged_adamw8bit);
  const RunConfig r = preset(Framework::axolotl);
  EXPECT_EQ(r.lora_dropout, 0.05);
  EXPECT_EQ(r.attn, Attn::flash);
  EXPECT_EQ(r.grad_ckpt, GradCkpt::full);
}

TEST(FrameworkPresets, LlamaFactoryAdaptsAllLinearsInFp32) {
  RunConfig r;
  r.lora_targets = LoraTargets::attn;
  apply_framework(Framework::llamafactory, r);
  EXPECT_EQ(r.lora_targets, LoraTargets::all_linear);
  EXPECT_TRUE(r.adapter_fp32);
  EXPECT_EQ(r.lora_dropout, 0.0);
  EXPECT_EQ(r.grad_ckpt, GradCkpt::full);
  EXPECT_EQ(r.loss, LossKind::hf);
}

TEST(FrameworkPresets, TorchtuneKeepsAdaptersInTheModelDtypeAndShardsWithFsdp) {
  const RunConfig r = preset(Framework::torchtune);
  EXPECT_FALSE(r.adapter_fp32);
  EXPECT_EQ(r.lora_dropout, 0.0);
  EXPECT_TRUE(r.fused_adamw);
  EXPECT_EQ(r.grad_ckpt, GradCkpt::full);
  EXPECT_EQ(r.shard, ShardMode::fsdp);
  EXPECT_FALSE(r.fsdp_no_sync);
  EXPECT_EQ(r.loss, LossKind::chunked_output);
}

TEST(FrameworkPresets, LitgptShardsWithFsdpAndAccumulatesUnderNoSync) {
  const RunConfig r = preset(Framework::litgpt);
  EXPECT_EQ(r.loss, LossKind::chunked);
  EXPECT_EQ(r.shard, ShardMode::fsdp);
  EXPECT_TRUE(r.fsdp_no_sync);
}

TEST(FrameworkPresets, NemoIsMegatronsDistributedOptimizer) {
  const RunConfig r = preset(Framework::nemo);
  EXPECT_EQ(r.shard, ShardMode::zero1);
  EXPECT_TRUE(r.fp32_grads);
  EXPECT_TRUE(r.fp32_optimizer_states);
  EXPECT_FALSE(r.adapter_fp32);
  EXPECT_EQ(r.grad_ckpt, GradCkpt::none);
  EXPECT_EQ(r.loss, LossKind::megatron);
}

// ms-swift 4.5.2 `swift sft`: TunerArguments (rank 8, dropout 0.05, all-linear, lora_dtype None
// -> peft's fp32 adapters), TrainArgumentsMixin (checkpointing on, the model's HF loss,
// accumulation to 16 sequences), HF TrainingArguments.optim fused on torch >= 2.8.
TEST(FrameworkPresets, SwiftIsSwiftSftDefaults) {
  RunConfig r;
  r.lora_targets = LoraTargets::attn;
  r.attn = Attn::eager;
  apply_framework(Framework::swift, r);
  EXPECT_EQ(r.framework, Framework::swift);
  EXPECT_EQ(r.loss, LossKind::hf);
  EXPECT_TRUE(r.adapter_fp32);
  EXPECT_EQ(r.lora_dropout, 0.05);
  EXPECT_EQ(r.lora_rank, 8u);
  EXPECT_EQ(r.lora_targets, LoraTargets::all_linear);
  EXPECT_EQ(r.grad_ckpt, GradCkpt::full);
  EXPECT_TRUE(r.fused_adamw);
  EXPECT_EQ(r.optim, Optim::adamw);
  EXPECT_EQ(r.shard, ShardMode::ddp);
  EXPECT_TRUE(r.fsdp_no_sync);
  EXPECT_EQ(r.attn, Attn::eager);  // attn_impl None: ms-swift leaves the kernel to the run
  const RunConfig q = preset(Framework::swift, Method::qlora);
  EXPECT_EQ(q.double_quant, DoubleQuant::on);
  EXPECT_EQ(q.optim, Optim::adamw);
  EXPECT_FALSE(q.bnb_saves_input);
  // No other preset sets the rank: the run's default stands.
  for (const auto& p : framework_presets()) {
    if (p.id == Framework::swift) continue;
    EXPECT_EQ(preset(p.id).lora_rank, RunConfig{}.lora_rank) << p.name;
  }
}

TEST(FrameworkPresets, SwiftAccumulatesToSixteenSequencesAStep) {
  EXPECT_EQ(framework_grad_accum(Framework::swift, 1, 1), 16u);
  EXPECT_EQ(framework_grad_accum(Framework::swift, 2, 1), 8u);
  EXPECT_EQ(framework_grad_accum(Framework::swift, 5, 1), 4u);  // ceil(3.2)
  EXPECT_EQ(framework_grad_accum(Framework::swift, 1, 6), 3u);  // ceil(16 / 6 ranks)
  EXPECT_EQ(framework_grad_accum(Framework::swift, 4, 8), 1u);  // max(1, ceil(0.5))
  EXPECT_EQ(framework_grad_accum(Framework::swift, ~0ull, 65536), 1u);
  for (const auto& p : framework_presets()) {
    if (p.id == Framework::swift) continue;
    EXPECT_EQ(framework_grad_accum(p.id, 1, 1), 1u) << p.name;
  }
}

TEST(FrameworkPresets, EveryPresetParsesAndHasItsDocRow) {
  const std::string doc = test::slurp(test::fixture("../../docs/estimator.md"));
  for (const auto& p : framework_presets()) {
    auto f = parse_framework(p.name);
    ASSERT_TRUE(f) << p.name;
    EXPECT_EQ(*f, p.id);
    EXPECT_EQ(preset(p.id).framework, p.id);
    EXPECT_NE(doc.find(fmt::format("| `{}` | {} |", p.name, p.version)), std::string::npos)
        << "docs/estimator.md needs a preset row for " << p.name << " at " << p.version;
  }
  EXPECT_EQ(parse_framework("swift").value(), Framework::swift);
  EXPECT_FALSE(parse_framework("ms-swift"));
  EXPECT_FALSE(parse_framework("megatron"));
  EXPECT_EQ(kDefaultFramework, Framework::hf);
}

// The mechanisms the presets switch on, at the estimate.
TEST(FrameworkPresets, OffloadedCheckpointsAddPinnedHostMemoryToThePool) {
  const auto s8 = shape("Llama-3.1-8B");
  RunConfig full;
  RunConfig off = full;
  off.grad_ckpt = GradCkpt::offload;
  const Estimate a = estimate(s8, full), b = estimate(s8, off);
  constexpr std::uint64_t kMiB = 1024 * 1024, kStartup = 200 * 256 * 1024;
  // Unsloth (unsloth_zoo 2026.8.13) offloads from the first step: of the 32 layer inputs
  // (2048 x 4096 x 2 = 16 MiB) the device keeps its two buffers' and the last layer's.
  const auto dropped = a.train_peak_allocated_bytes - b.train_peak_allocated_bytes;
  EXPECT_GE(dropped, 28 * 16 * kMiB);
  EXPECT_LE(dropped, 32 * 16 * kMiB);
  // Every layer's input pinned on the host (a power of two already), beside the 200 buffers of
  // 128 Ki bf16 elements it pins at start-up.
  EXPECT_EQ(b.pinned_host_bytes, 32 * 16 * kMiB + kStartup);
  EXPECT_GT(b.train_peak_pool_bytes, a.train_peak_pool_bytes);
  // Below 2 MiB, or below 512 tokens, a layer input stays on the device (MINIMUM_SIZE,
  // apply_unsloth_gradient_checkpointing).
  off.seq = 128;
  EXPECT_EQ(estimate(s8, off).pinned_host_bytes, kStartup);
}

TEST(FrameworkPresets, FusedAdamwHasNoForeachTemporary) {
  const auto s8 = shape("Llama-3.1-8B");
  RunConfig r;
  r.method = Method::full;
  r.seq = 128;  // foreach: the optimizer step is the peak
  RunConfig fused = r;
  fused.fused_adamw = true;
  const Estimate a = estimate(s8, r), b = estimate(s8, fused);
  // foreach AdamW's temporary: one bf16 copy of the 8,030,261,248 parameters. Without it the
  // peak is the embedding's backward, every gradient already there: above the step by the
  // embedding output's gradient (128 x 4096 x 2) and the batch (input ids and labels, int64).
  EXPECT_EQ(a.train_peak_allocated_bytes - b.train_peak_allocated_bytes,
            16'060'522'496u - (128u * 4096 * 2 + 16 * 128));
}

// Since unsloth 2025.10 the fused loss runs at every length (the <= 1024-token branch that
// returned plain logits became a no-op).
TEST(FrameworkPresets, UnslothFusesTheLossAtEveryLength) {
  const auto s8 = shape("Llama-3.1-8B");
  RunConfig r;
  apply_framework(Framework::unsloth, r);
  RunConfig hf;
  hf.grad_ckpt = GradCkpt::offload;
  for (std::uint64_t seq : {512u, 1024u, 2048u}) {
    r.seq = hf.seq = seq;
    EXPECT_LT(estimate(s8, r).terms.logits, estimate(s8, hf).terms.logits) << seq;
  }
}

}  // namespace
}  // namespace sparkops::plan
