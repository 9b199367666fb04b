// Offloaded checkpointing (--grad-ckpt offload) as each framework runs it, on Llama-3.2-3B at
// 2 x 4096 tokens: a layer input is 2 x 4096 x 3072 bf16 = 48 MiB, pinned in a 64 MiB
// power-of-two host block. torchtune's OffloadActivations and Unsloth's (unsloth_zoo 2026.8.13)
// both move the 28 inputs off the device from the first step; plain checkpointing keeps them.

#include <gtest/gtest.h>

#include "plan/frameworks.hpp"
#include "plan/plan_args.hpp"
#include "plan_fixtures.hpp"

namespace sparkops::plan {
namespace {

constexpr double kLayerIn = 2.0 * 4096 * 3072 * 2;
constexpr std::uint64_t kPinned = 64ULL << 20;
constexpr std::uint64_t kUnslothStartup = 200ULL * 128 * 1024 * 2;  // 200 x 128 Ki bf16

Estimate planned(GradCkpt ckpt, OffloadKind kind, std::uint64_t seq = 4096) {
  RunConfig r;
  apply_framework(Framework::torchtune, r);
  r.method = Method::lora;
  r.batch = 2;
  r.seq = seq;
  r.grad_ckpt = ckpt;
  r.offload_kind = kind;
  return estimate(fixtures::shape("Llama-3.2-3B"), r);
}

double below(const Estimate& base, const Estimate& e) {
  return static_cast<double>(base.train_peak_allocated_bytes) -
         static_cast<double>(e.train_peak_allocated_bytes);
}

// torchtune keeps two inputs through the loss and backward; Unsloth its two device buffers and
// the last layer's input. Plain checkpointing keeps all 28.
TEST(ActivationOffload, BothFrameworksMoveTheInputsOffTheDeviceFromTheFirstStep) {
  const Estimate plain = planned(GradCkpt::full, OffloadKind::unsloth);
  const Estimate tt = planned(GradCkpt::offload, OffloadKind::torchtune);
  const Estimate us = planned(GradCkpt::offload, OffloadKind::unsloth);
  EXPECT_GE(below(plain, tt), 25 * kLayerIn);
  EXPECT_LE(below(plain, tt), 28 * kLayerIn);
  EXPECT_GE(below(plain, us), 24 * kLayerIn);
  EXPECT_LE(below(plain, us), 28 * kLayerIn);
  EXPECT_LT(tt.train_peak_reserved_bytes, plain.train_peak_reserved_bytes);
  EXPECT_LT(us.train_peak_reserved_bytes, plain.train_peak_reserved_bytes);
  // Every layer's input is pinned (the first step offloads the last layer's too); Unsloth adds
  // the 200 buffers it pins at start-up.
  EXPECT_EQ(tt.pinned_host_bytes, 28 * kPinned);
  EXPECT_EQ(us.pinned_host_bytes, 28 * kPinned + kUnslothStartup);
  EXPECT_EQ(plain.pinned_host_bytes, 0u);
}

// Below a max_seq_length of 512 Unsloth checkpoints without offloading
// (apply_unsloth_gradient_checkpointing); only its start-up buffers are pinned.
TEST(ActivationOffload, UnslothDoesNotOffloadBelow512Tokens) {
  const Estimate plain = planned(GradCkpt::full, OffloadKind::unsloth, 256);
  const Estimate us = planned(GradCkpt::offload, OffloadKind::unsloth, 256);
  EXPECT_EQ(us.train_peak_allocated_bytes, plain.train_peak_allocated_bytes);
  EXPECT_EQ(us.pinned_host_bytes, kUnslothStartup);
}

// The preset decides whose offloading --grad-ckpt offload means.
TEST(ActivationOffload, OnlyTheTorchtunePresetOffloadsWithOffloadActivations) {
  for (const auto& p : framework_presets()) {
    RunConfig r;
    apply_framework(p.id, r);
    EXPECT_EQ(r.offload_kind == OffloadKind::torchtune, p.id == Framework::torchtune) << p.name;
  }
}

TEST(ActivationOffload, CompileIsAPlanFlag) {
  PlanArgs a;
  a.model = "Llama-3.2-3B";
  EXPECT_FALSE(plan_input(a)->run.compiled);
  a.compile = true;
  EXPECT_TRUE(plan_input(a)->run.compiled);
}

}  // namespace
}  // namespace sparkops::plan
