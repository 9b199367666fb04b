// Data-parallel sharding by each wrapper's rules, against figures worked by hand.
#include <gtest/gtest.h>

#include "models/catalogue.hpp"
#include "plan/estimator.hpp"
#include "plan/sharding.hpp"
#include "plan_fixtures.hpp"

namespace sparkops::plan {
namespace {

using fixtures::shape;

// A toy model: 8 GB of weights in 10 layers of 0.6 GB and a 2 GB root, 8 GB of gradients,
// 16 GB of optimizer states, hidden 4096, on 4 ranks.
constexpr ShardMode kModes[] = {ShardMode::ddp, ShardMode::fsdp, ShardMode::zero1, ShardMode::zero2,
                                ShardMode::zero3};

ShardInput toy() {
  ShardInput in;
  in.ranks = 4;
  in.weights = 8e9;
  in.root_weights = 2e9;
  in.layer_weights = 0.6e9;
  in.largest_module = 1e9;
  in.gradients = 8e9;
  in.layer_grads = 0.6e9;
  in.optimizer = 16e9;
  in.master = 0;
  in.trainable = 4e9;
  in.grad_elem_bytes = 2;
  in.hidden = 4096;
  return in;
}

TEST(Sharding, OneRankIsUnchangedWhateverTheMode) {
  ShardInput in = toy();
  in.ranks = 1;
  for (ShardMode m : kModes) {
    const ShardTerms t = shard_terms(m, in);
    EXPECT_EQ(t.weights, 8e9);
    EXPECT_EQ(t.gradients, 8e9);
    EXPECT_EQ(t.optimizer, 16e9);
    EXPECT_EQ(t.reduce_transient, 0);
  }
}

TEST(Sharding, DdpReplicatesAndItsBucketsCopyTheGradients) {
  const ShardTerms t = shard_terms(ShardMode::ddp, toy());
  EXPECT_EQ(t.weights, 8e9);
  EXPECT_EQ(t.optimizer, 16e9);
  EXPECT_EQ(t.buckets, 8e9);
  EXPECT_EQ(t.gradients, 16e9);
}

TEST(Sharding, FsdpKeepsShardsPlusTheRootAndTwoLayersGathered) {
  const ShardTerms t = shard_terms(ShardMode::fsdp, toy());
  EXPECT_DOUBLE_EQ(t.gathered, 2e9 + 2 * 0.6e9);
  EXPECT_DOUBLE_EQ(t.weights, 8e9 / 4 + 3.2e9);
  EXPECT_DOUBLE_EQ(t.gradients, 2e9);
  EXPECT_DOUBLE_EQ(t.optimizer, 4e9);
  // One layer's unsharded gradient before its reduce-scatter, plus the scattered shard.
  EXPECT_DOUBLE_EQ(t.reduce_transient, 0.6e9 + 0.15e9);
  ShardInput accum = toy();
  accum.no_sync = true;
  EXPECT_DOUBLE_EQ(shard_terms(ShardMode::fsdp, accum).gradients, 8e9);
}

TEST(Sharding, FsdpOptimizerStepSeesShardsAndScatteredGradients) {
  // The synced micro-batch reduce-scatters every unit's gradient (the no_sync sum included) and
  // reshards every unit, the root too: the step holds W/N and G/N whether it accumulated or not.
  for (const bool no_sync : {false, true}) {
    ShardInput in = toy();
    in.no_sync = no_sync;
    const ShardTerms t = shard_terms(ShardMode::fsdp, in);
    EXPECT_DOUBLE_EQ(t.step_weights, 8e9 / 4) << no_sync;
    EXPECT_DOUBLE_EQ(t.step_gradients, 8e9 / 4) << no_sync;
  }
  // The other wrappers keep at the step what they keep through the backward.
  for (ShardMode m : {ShardMode::ddp, ShardMode::zero1, ShardMode::zero2, ShardMode::zero3}) {
    const ShardTerms t = shard_terms(m, toy());
    EXPECT_DOUBLE_EQ(t.step_weights, t.weights) << shard_name(m);
    EXPECT_DOUBLE_EQ(t.step_gradients, t.gradients) << shard_name(m);
  }
}

TEST(Sharding, FsdpMixedPrecisionGathersInTheComputeDtype) {
  // fp32 shards gathered under MixedPrecision(param_dtype=bf16): half the bytes per element.
  ShardInput in = toy();
  in.gather_ratio = 0.5;
  const ShardTerms t = shard_terms(ShardMode::fsdp, in);
  EXPECT_DOUBLE_EQ(t.gathered, 0.5 * (2e9 + 2 * 0.6e9));
  EXPECT_DOUBLE_EQ(t.weights, 8e9 / 4 + 1.6e9);
}

TEST(Sharding, ZeroStagesShardWhatTheirStageNames) {
  const ShardTerms z1 = shard_terms(ShardMode::zero1, toy());
  EXPECT_EQ(z1.weights, 8e9);
  EXPECT_EQ(z1.gradients, 8e9);
  EXPECT_DOUBLE_EQ(z1.optimizer, 4e9);
  const ShardTerms z2 = shard_terms(ShardMode::zero2, toy());
  EXPECT_EQ(z2.weights, 8e9);
  // The partition's gradients + one reduce bucket of hidden^2 bf16 elements (HF "auto").
  EXPECT_DOUBLE_EQ(z2.gradients, 2e9 + 4096.0 * 4096 * 2);
  EXPECT_DOUBLE_EQ(z2.step_transient, 4e9 * 4 / 4);
  const ShardTerms z3 = shard_terms(ShardMode::zero3, toy());
  // Partitioned weights + the largest module gathered + the 0.9 hidden^2 prefetch bucket.
  EXPECT_DOUBLE_EQ(z3.weights, 2e9 + 1e9 + 0.9 * 4096 * 4096 * 2);
  EXPECT_DOUBLE_EQ(z3.optimizer, 4e9);
}

TEST(Sharding, NamesRoundTripAndBadNamesAreRefused) {
  for (ShardMode m : kModes) EXPECT_EQ(*parse_shard(shard_name(m)), m);
  const auto bad = parse_shard("hsdp");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().detail.find("--shard"), std::string::npos);
}

// Llama-3.1-8B bf16 full fine-tune on 8 GPUs under FSDP, worked by hand:
// P = 8,030,261,248 (16,060,522,496 bytes); root = embedding + lm_head = 2 x 525,336,576
// params = 2,101,346,304 bytes; one layer = (16,060,522,496 - 2,101,346,304) / 32 =
// 436,224,256 bytes. Weights: 16,060,522,496 / 8 + 2,101,346,304 + 2 x 436,224,256 =
// 4,981,360,128. Gradients (reduce-scattered, no accumulation): 2,007,565,312. torch AdamW in
// bf16 (4 B/param): 32,121,044,992 / 8 = 4,015,130,624.
TEST(Sharding, EightBFullFineTuneOnEightGpusUnderFsdp) {
  RunConfig r = fixtures::full_run(8, ShardMode::fsdp);
  const Estimate e = estimate(shape("Llama-3.1-8B"), r);
  EXPECT_EQ(e.ranks, 8u);
  EXPECT_EQ(e.terms.weights, 4'981'360'128u);
  EXPECT_EQ(e.terms.gradients, 2'007'565'312u);
  EXPECT_EQ(e.terms.optimizer, 4'015'130'624u);
  // Accumulating under no_sync (Accelerate, Lightning): the full gradients stay.
  r.grad_accum = 4;
  EXPECT_EQ(estimate(shape("Llama-3.1-8B"), r).terms.gradients, 16'060'522'496u);
  // torchtune's FSDP2 recipes reduce-scatter every micro-batch.
  r.fsdp_no_sync = false;
  EXPECT_EQ(estimate(shape("Llama-3.1-8B"), r).terms.gradients, 2'007'565'312u);
}

TEST(Sharding, DdpAcrossTwoMachinesHalvesNothing) {
  const RunConfig one = fixtures::full_run();
  RunConfig two = one;
  two.nodes = 2;
  const auto s = shape("Llama-3.1-8B");
  const Estimate a = estimate(s, one), b = estimate(s, two);
  EXPECT_EQ(a.terms.weights, b.terms.weights);
  EXPECT_EQ(a.terms.optimizer, b.terms.optimizer);
  EXPECT_EQ(b.terms.gradients, 2 * a.terms.gradients);
}

TEST(Sharding, DeepSpeedKeepsFp32MasterAndStates) {
  const Estimate e = estimate(shape("Llama-3.1-8B"), fixtures::full_run(4, ShardMode::zero2));
  // fp32 master (4 B) and fp32 Adam states (8 B) per parameter, a quarter each.
  EXPECT_EQ(e.terms.master, 8'030'261'248u);
  EXPECT_EQ(e.terms.optimizer, 16'060'522'496u);
  EXPECT_EQ(e.terms.weights, 16'060'522'496u);
}

}  // namespace
}  // namespace sparkops::plan
