// torchtune's OffloadActivations (--framework torchtune --grad-ckpt offload) against Unsloth's
// offloaded checkpointing, on Llama-3.2-3B at 2 x 4096 tokens: a layer input is 2 x 4096 x 3072
// bf16 = 48 MiB, pinned in a 64 MiB power-of-two host block.

#include <gtest/gtest.h>

#include "plan/frameworks.hpp"
#include "plan/plan_args.hpp"
#include "plan_fixtures.hpp"

namespace sparkops::plan {
namespace {

constexpr double kLayerIn = 2.0 * 4096 * 3072 * 2;
constexpr std::uint64_t kPinned = 64ULL << 20;

Estimate offloaded(bool every_step) {
  RunConfig r;
  apply_framework(Framework::torchtune, r);
  r.method = Method::lora;
  r.batch = 2;
  r.seq = 4096;
  r.grad_ckpt = GradCkpt::offload;
  r.offload_every_step = every_step;
  return estimate(fixtures::shape("Llama-3.2-3B"), r);
}

// From the first step the device keeps two of the 28 inputs through the loss and backward (the
// one brought back and the previous one), where Unsloth's first step kept all of them.
TEST(ActivationOffload, TorchtuneMovesTheInputsOffTheDeviceFromTheFirstStep) {
  const Estimate tt = offloaded(true), unsloth = offloaded(false);
  const double dropped = static_cast<double>(unsloth.train_peak_allocated_bytes) -
                         static_cast<double>(tt.train_peak_allocated_bytes);
  EXPECT_GE(dropped, 25 * kLayerIn);
  EXPECT_LE(dropped, 28 * kLayerIn);
  EXPECT_LT(tt.train_peak_reserved_bytes, unsloth.train_peak_reserved_bytes);
  // Every layer's input is pinned (>= 1 KiB), where Unsloth skips the last layer's.
  EXPECT_EQ(tt.pinned_host_bytes, 28 * kPinned);
  EXPECT_EQ(unsloth.pinned_host_bytes, 27 * kPinned);
}

// The preset decides which offloading --grad-ckpt offload means.
TEST(ActivationOffload, OnlyTheTorchtunePresetOffloadsEveryStep) {
  for (const auto& p : framework_presets()) {
    RunConfig r;
    apply_framework(p.id, r);
    EXPECT_EQ(r.offload_every_step, p.id == Framework::torchtune) << p.name;
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
