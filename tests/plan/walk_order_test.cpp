// Two rules of the step walk read from the frameworks' code (src/plan/autograd_sim.cpp and
// data/families.json cite it): the HF gated MLPs evaluate the activation before up_proj, and
// torchtune's chunked-output loss runs after the model's forward has dropped `h` when the
// frozen head saved none of it.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "plan/autograd_sim.hpp"
#include "plan/autograd_sim_families.hpp"
#include "plan_fixtures.hpp"

namespace sparkops::plan {
namespace {

std::size_t line_of(const std::vector<std::string>& layer, const std::string& prefix) {
  const auto it = std::find_if(layer.begin(), layer.end(),
                               [&](const std::string& l) { return l.rfind(prefix, 0) == 0; });
  return static_cast<std::size_t>(it - layer.begin());
}

// LlamaMLP.forward (and Qwen3's, Gemma 1-3's, Mixtral's experts):
// `self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))`: Python evaluates the left
// operand whole before up_proj runs, so the activation's output exists beside up_proj's (and
// backward meets up_proj's nodes first).
TEST(WalkOrder, GatedMlpRunsTheActivationBeforeUpProj) {
  const auto& fs = sim::families();
  ASSERT_TRUE(fs.error.empty()) << fs.error;
  for (const char* name : {"llama", "qwen3", "gemma", "gemma2", "gemma3", "mixtral"}) {
    const auto& layer = fs.by_name.at(name).layer;
    const std::size_t act = line_of(layer, "sg = ");
    const std::size_t up = line_of(layer, "u = linear");
    ASSERT_LT(up, layer.size()) << name;
    EXPECT_LT(act, up) << name;
  }
}

// torchtune 0.6.1 TransformerDecoder.forward returns the list of logits chunks; `h` dies with
// the frame unless the head saved it. LoRA (frozen head), Llama-3.1-8B, bf16, 2 x 4096: the
// loss's high point (CEWithChunkedOutputLoss at its last chunk: every chunk's bf16 logits, the
// log-softmax of the seven before it, the last chunk's fp32 copy and log-softmax, the labels)
// is counted without the 2 h T bytes of h; a full fine-tune's head keeps them (its saved input).
TEST(WalkOrder, TorchtuneChunkedOutputLossRunsWithoutHWhenTheHeadIsFrozen) {
  constexpr double V = 128256, T = 2 * 4096, h = 4096, rows = T / 8;
  SimRun run;
  run.method = TrainMethod::lora;
  run.batch = 2;
  run.seq = 4096;
  run.model_bytes = 2;
  run.loss = LossPath::chunked_output;
  const auto r = simulate_step(fixtures::shape("Llama-3.1-8B").arch, run);
  ASSERT_TRUE(r.has_value());
  const double at_loss =
      r->activations - 2 * h * T + 2 * V * T + 4 * V * (T - rows) + 8 * V * rows + 8 * T;
  EXPECT_DOUBLE_EQ(r->forward_peak_extra, at_loss);
}

}  // namespace
}  // namespace sparkops::plan
