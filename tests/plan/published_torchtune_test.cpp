// torchtune's published peaks (README.md, "Memory and training speed", commit 30b8519e, Sep 2024,
// and "Optimization flags", commit 1814feb1, Nov 2024), none of them in the validation tables:
// each row planned with the flags its recipe config states at that commit (the README: batch 2,
// packed, torch.compile on, no accumulation), against the figure torchtune logged
// (training.get_memory_stats: peak active bytes, GiB). A check on the mechanisms, never a fit:
// the bound is a ratchet at today's state, and the layers stay eager programs under compile
// (an upper bound: inductor's partitioner keeps fewer), so the estimates sit above.

#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "plan/plan_args.hpp"
#include "plan_fixtures.hpp"

namespace sparkops::plan {
namespace {

struct Published {
  const char* what;
  const char* model;
  const char* method;
  const char* seq;
  const char* rank;
  const char* targets;
  const char* grad_ckpt;
  double gib;
  const char* optim = "";
  const char* optimizer_in_bwd = "";
};

// 8B_full_single_device.yaml at 30b8519e: PagedAdamW8bit, optimizer_in_bwd (the preset's
// one-GPU full fine-tune). The 3B full rows of the "Optimization flags" table run torch AdamW
// (the table adds 8-bit AdamW later) and add the optimizer step in backward, then offloading.
// 8B_lora_single_device.yaml at 30b8519e: lora_attn_modules [q_proj, v_proj], no MLP, rank 8;
// 8B_qlora_single_device.yaml: q, k, v, output_proj and the MLP, rank 8; both with activation
// checkpointing on and offloading off (validation rows T03 and T05 count the same two).
// 3B_{lora,qlora}_single_device.yaml at 1814feb1: q_proj, v_proj, output_proj and the MLP, rank 64,
// with the table's activation offloading; the full fine-tune row before the fused optimizer step
// (torch AdamW, fused).
constexpr Published kRows[] = {
    {"Llama 3.1 8B LoRA, 1x 4090", "Llama-3.1-8B", "lora", "2048", "8", "q_proj,v_proj", "full",
     16.2},
    {"Llama 3.1 8B QLoRA, 1x 4090", "Llama-3.1-8B", "qlora", "2048", "8",
     "q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj", "full", 7.4},
    {"Llama 3.1 8B full, 1x 4090 (PagedAdamW8bit stepped in backward)", "Llama-3.1-8B", "full",
     "2048", "", "", "full", 18.9},
    {"Llama 3.2 3B + activation checkpointing", "Llama-3.2-3B", "full", "4096", "", "", "full",
     24.9, "adamw", "off"},
    {"Llama 3.2 3B + fuse optimizer step into backward", "Llama-3.2-3B", "full", "4096", "", "",
     "full", 23.1, "adamw", "on"},
    {"Llama 3.2 3B + activation offloading", "Llama-3.2-3B", "full", "4096", "", "", "offload",
     21.8, "adamw", "on"},
    {"Llama 3.2 3B LoRA", "Llama-3.2-3B", "lora", "4096", "64",
     "q_proj,v_proj,o_proj,gate_proj,up_proj,down_proj", "offload", 8.5},
    {"Llama 3.2 3B QLoRA", "Llama-3.2-3B", "qlora", "4096", "64",
     "q_proj,v_proj,o_proj,gate_proj,up_proj,down_proj", "offload", 4.6},
};

double planned_gib(const Published& p, bool compile) {
  PlanArgs a;
  a.model = p.model;
  a.framework = "torchtune";
  a.method = p.method;
  a.batch = "2";
  a.seq = p.seq;
  a.grad_ckpt = p.grad_ckpt;
  if (*p.rank != '\0') a.lora_rank = p.rank;
  if (*p.targets != '\0') a.lora_targets = p.targets;
  a.compile = compile;
  a.optim = p.optim;
  a.optimizer_in_bwd = p.optimizer_in_bwd;
  a.budget = "80";
  auto in = plan_input(a);
  EXPECT_TRUE(in.has_value()) << p.what;
  if (!in) return 0;
  const Estimate e = estimate(fixtures::shape(p.model), in->run);
  return static_cast<double>(e.train_peak_allocated_bytes) / 1073741824.0;
}

// Today: +6.2, +2.7, +1.1, +1.6, -0.4, 0.0, +4.7 and +8.7 % (docs/estimator.md "torchtune's
// published peaks"). "Never below" allows 1 %: the optimizer-in-backward rows sit at it.
TEST(PublishedTorchtune, CompiledRunsWithinTenPercentAndNeverBelow) {
  for (const auto& p : kRows) {
    const double est = planned_gib(p, true);
    EXPECT_LE(std::fabs(est / p.gib - 1), 0.10) << p.what << ": " << est << " GiB";
    EXPECT_GE(est, p.gib * 0.99) << p.what << ": the eager layers make an upper bound";
  }
}

// Without the compiled loss and torchtune's offloading, the same rows came out 20-120 % high:
// the fp32 log-softmax of every chunk and the layer inputs on the device.
TEST(PublishedTorchtune, TheCompiledLossIsWhatClosesTheGap) {
  for (const auto& p : kRows) {
    if (std::string(p.method) == "full") continue;
    EXPECT_GT(planned_gib(p, false), p.gib * 1.15) << p.what;
  }
}

}  // namespace
}  // namespace sparkops::plan
