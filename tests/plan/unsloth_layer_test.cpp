// Unsloth's decoder layer (the unsloth_* programs, plan/autograd_sim_unsloth.cpp): what one layer
// keeps for backward, counted by hand from unsloth 2026.8.19's Functions, the groups
// patch_peft_model leaves to PEFT, which models run it, and its persistent buffers.
#include <gtest/gtest.h>

#include "plan/autograd_sim.hpp"
#include "plan/autograd_sim_families.hpp"
#include "plan/autograd_sim_graph.hpp"

namespace sparkops::plan {
namespace {

models::Architecture small_llama(std::string family = "llama") {
  models::Architecture a;
  a.family = std::move(family);
  a.hidden = 64;
  a.layers = 2;
  a.heads = 4;
  a.kv_heads = 2;
  a.head_dim = 16;
  a.intermediate = 128;
  a.vocab = 256;
  return a;
}

SimRun unsloth_run(TrainMethod method, std::vector<std::string> targets) {
  SimRun r;
  r.method = method;
  r.batch = 1;
  r.seq = 32;
  r.model_bytes = 2;
  r.adapter_bytes = 4;
  r.lora_rank = 8;
  r.attn = AttnKernel::flash;
  r.targets = std::move(targets);
  r.all_linear = false;
  r.unsloth_layer = true;
  return r;
}

const std::vector<std::string> kAll = {"q_proj",    "k_proj",  "v_proj",   "o_proj",
                                       "gate_proj", "up_proj", "down_proj"};

// Bytes per token one middle layer keeps for backward.
double layer_saved_per_token(const models::Architecture& a, const SimRun& run) {
  bool known = false;
  const std::string prog(program_for(a.family, run, &known));
  const sim::Family& f = sim::families().by_name.at(prog);
  sim::Dims d{};
  d.h = 64, d.q = 64, d.kv = 32, d.i = 128, d.hd = 16, d.heads = 4, d.kvh = 2, d.k = 1, d.E = 1;
  d.s = 32, d.V = 256, d.r = 8;
  auto graphs = sim::step_graphs(f, run, d, 2);
  EXPECT_TRUE(graphs.has_value()) << prog;
  if (!graphs) return 0;
  const sim::Graph& g = (*graphs)->mid.first;
  return sim::saved_bytes(g, g.saved, 1);
}

TEST(UnslothLayer, RunsForLlamaMistralQwen2AndQwen3UnderLoraOnly) {
  bool known = false;
  const SimRun lora = unsloth_run(TrainMethod::lora, kAll);
  EXPECT_EQ(program_for("llama", lora, &known), "unsloth_llama");
  EXPECT_EQ(program_for("mistral", lora, &known), "unsloth_llama");
  EXPECT_EQ(program_for("qwen2", lora, &known), "unsloth_qwen2");
  EXPECT_EQ(program_for("qwen3", lora, &known), "unsloth_qwen3");
  // Gemma-3 and the other FastModel families keep the HF layer; a full fine-tune goes through
  // FastModel too (loader.py: full_finetuning delegates to FastModel.from_pretrained).
  EXPECT_EQ(program_for("gemma3", lora, &known), "gemma3");
  SimRun full = lora;
  full.method = TrainMethod::full;
  EXPECT_EQ(program_for("llama", full, &known), "llama");
  SimRun hf = lora;
  hf.unsloth_layer = false;
  EXPECT_EQ(program_for("llama", hf, &known), "llama");
}

TEST(UnslothLayer, FusedGroupsKeepWhatTheirFunctionsSave) {
  // h 64, q 64, kv 32, i 128, 4 heads, bf16:
  //   Fast_RMS_Layernorm x2   its input (2h) and an fp32 rstd (4)          2 * (128 + 4)
  //   LoRA_QKV                n1 (2h)                                        128
  //   RoPE (clones)           nothing; flash keeps q, k, v, out, lse (fp32)  2 * (64 + 32 + 32 +
  //   64) + 16 LoRA_W                  the attention output (the same storage)        0 LoRA_MLP n2
  //   (2h), e and g (2i each)                     128 + 512
  const double expected = 2 * (128 + 4) + 128 + (384 + 16) + 128 + 512;
  EXPECT_DOUBLE_EQ(layer_saved_per_token(small_llama(), unsloth_run(TrainMethod::lora, kAll)),
                   expected);
  // QLoRA's fused Functions keep the same (the 4-bit base is dequantized, not saved).
  EXPECT_DOUBLE_EQ(layer_saved_per_token(small_llama(), unsloth_run(TrainMethod::qlora, kAll)),
                   expected);
}

TEST(UnslothLayer, AGroupNotWhollyAdaptedRunsPeftsModules) {
  // q and v adapted only: q/k/v, o and the MLP stay PEFT's and HF's. PEFT casts n1 to the fp32
  // adapters' dtype per adapted projection (4h each) and lora_B keeps lora_A's output (4r); the
  // frozen projections keep nothing; SiLU keeps g, the product keeps SiLU's output and u (2i
  // each); the norms and RoPE are still Unsloth's.
  const double norms = 2 * (128 + 4);
  const double peft_qv = 2 * (4 * 64 + 4 * 8);
  const double attention = 2 * (64 + 32 + 32 + 64) + 16;
  const double mlp = 3 * 2 * 128;
  EXPECT_DOUBLE_EQ(
      layer_saved_per_token(small_llama(), unsloth_run(TrainMethod::lora, {"q_proj", "v_proj"})),
      norms + peft_qv + attention + mlp);
}

TEST(UnslothLayer, Qwen2sBiasedProjectionsAreNotFused) {
  // patch_peft_model fuses q/k/v only when their bases have no bias: Qwen2's three PEFT
  // projections each keep their fp32 cast of n1 and lora_A's output instead of one n1.
  const double fused = layer_saved_per_token(small_llama(), unsloth_run(TrainMethod::lora, kAll));
  const double qwen2 =
      layer_saved_per_token(small_llama("qwen2"), unsloth_run(TrainMethod::lora, kAll));
  EXPECT_DOUBLE_EQ(qwen2 - fused, 3 * (4 * 64 + 4 * 8) - 128);
}

TEST(UnslothLayer, Qwen3sHeadNormsKeepTheProjectionsAndARstdPerHead) {
  const double llama = layer_saved_per_token(small_llama(), unsloth_run(TrainMethod::lora, kAll));
  const double qwen3 =
      layer_saved_per_token(small_llama("qwen3"), unsloth_run(TrainMethod::lora, kAll));
  // q (2q) and k (2kv) as LoRA_QKV returned them, and an fp32 rstd per head of each (4 + 2).
  EXPECT_DOUBLE_EQ(qwen3 - llama, 2 * (64 + 32) + 4 * (4 + 2));
}

TEST(UnslothLayer, ABaseWithDropoutIsNotPatched) {
  SimRun run = unsloth_run(TrainMethod::lora, kAll);
  run.lora_dropout = 0.05;
  const sim::Family& f = sim::families().by_name.at("unsloth_llama");
  EXPECT_FALSE(sim::unsloth_fuses(f, run, {"q_proj", "k_proj", "v_proj"}));
  run.lora_dropout = 0;
  EXPECT_TRUE(sim::unsloth_fuses(f, run, {"q_proj", "k_proj", "v_proj"}));
}

TEST(UnslothLayer, PersistentBuffersAreTheRotaryCacheAndTheLargestDequantizedWeight) {
  const auto a = small_llama();
  // The cos/sin cache, head_dim x 2 B, twice: min(max_position_embeddings, 32768) rows at init,
  // grown to a multiple of 8192 when max_position_embeddings (Llama-3.1's 131,072) or the
  // sequence (32 here) needs more.
  auto cache = [](double rows) { return 2 * rows * 16 * 2; };
  const double rope = cache(4096);
  EXPECT_DOUBLE_EQ(unsloth_buffer_bytes(a, unsloth_run(TrainMethod::lora, kAll), 4096), rope);
  EXPECT_DOUBLE_EQ(unsloth_buffer_bytes(a, unsloth_run(TrainMethod::lora, kAll), 131072),
                   cache(131072));
  EXPECT_DOUBLE_EQ(unsloth_buffer_bytes(a, unsloth_run(TrainMethod::lora, kAll), 16), cache(8192));
  // A 4-bit base: the global weight buffer at the largest fused weight (h x i) and its absmax.
  const double largest = 64.0 * 128;
  EXPECT_DOUBLE_EQ(unsloth_buffer_bytes(a, unsloth_run(TrainMethod::qlora, kAll), 4096),
                   rope + largest * 2 + largest / 64 * 4);  // 8192 elements: 128 blocks
  // Only the attention fused: its largest weight (q_proj, h x q).
  EXPECT_DOUBLE_EQ(unsloth_buffer_bytes(
                       a, unsloth_run(TrainMethod::qlora, {"q_proj", "k_proj", "v_proj"}), 4096),
                   rope + 64.0 * 64 * 2 + 64.0 * 64 / 64 * 4);
  SimRun hf = unsloth_run(TrainMethod::qlora, kAll);
  hf.unsloth_layer = false;
  EXPECT_DOUBLE_EQ(unsloth_buffer_bytes(a, hf, 4096), 0);
}

}  // namespace
}  // namespace sparkops::plan
