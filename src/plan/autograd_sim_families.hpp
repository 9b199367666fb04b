#pragma once
// The family descriptions of data/families.json (each family's modules, its decoder layer's
// operator program and its quirks), parsed once, plus the size expressions the program uses.
// Internal to the activation model: autograd_sim.hpp is the public interface.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "plan/autograd_sim.hpp"

namespace sparkops::plan::sim {

struct Module {
  std::string d_in, d_out;
  bool bias = false;
  bool expert = false;
};
// One program line, parsed once when the data is loaded: "outs = op args @module".
struct Line {
  std::string text;
  std::vector<std::string> outs, words;  // words[0] is the op
  std::string module;                    // the first @module
  std::vector<std::string> modules;      // every @module (a fused op names several)
};

struct Family {
  std::string name;
  std::vector<Line> program;
  std::string norm;
  std::map<std::string, Module> modules;
  std::vector<std::string> layer;
  double rotary_fraction = 1.0;
  bool embed_scale = false, attn_softcap = false, final_softcap = false, learned_positions = false;
  bool lm_head_bias = false;  // the lm_head has a bias (Phi-1/2)
  // Baichuan-2 NormHead: F.linear(h, F.normalize(weight)) in training, a normalized copy of the
  // head weight that the matmul keeps for its input's gradient.
  bool norm_head = false;
  double dropout = 0.0;
  // What the layers' rotary keeps that all layers share: "cos_sin" (HF: the model-dtype cos and
  // sin, 2*hd a token), "freqs_fp32" (TE FusedRoPEFunc keeps GPTModel's rotary_pos_emb, fp32
  // [s, hd], once), "none" (each call keeps its own: the mcore_rope op).
  // "cache": the model's persistent rotary tables (Unsloth's LlamaRotaryEmbedding cos/sin cache,
  // counted with its buffers), nothing per step.
  std::string rope_shared = "cos_sin";
  // The embedding output requires grad whatever the checkpointing (Unsloth: unsloth_zoo
  // prepare_model_for_training runs enable_input_require_grads).
  bool embed_requires_grad = false;
  // The batch carries int64 position_ids (TRL's collators) and the model keeps an int32 copy
  // through the step (Unsloth: LlamaModel_fast_forward's `.to(torch.int32)`, held by every
  // RoPE ctx).
  bool position_ids = false;
  bool seq_saves = false;  // some op keeps sequence-sized tensors (the graphs depend on s)
  // value -> the value whose creation frees it: the modeling code's variable that keeps a
  // sub-module's input alive until the sub-module returns (`hidden_states` holds the norm's
  // output through self_attn / mlp), past the value's last use as an operand.
  std::map<std::string, std::string> held;
};

struct Families {
  std::map<std::string, Family> by_name;
  std::map<std::string, std::string> alias;
  std::string error;
};

// The parsed families.json (loaded on first use; `error` is set when the data does not parse).
const Families& families();

// The dimensions a size expression ("q+2*kv", "E*i") may name, for one model and run.
struct Dims {
  double h, q, kv, i, hd, heads, kvh, k, E, s, V, r;
};

// The dimensions of one model under one run.
Dims dims_for(const models::Architecture& a, const SimRun& run);

// A families.json size expression ("h", "q+2*kv", "2*i") evaluated on d.
// Errors: a name the expression language does not know.
Result<double> eval_dim(std::string_view e, const Dims& d);

// PEFT matches a target against the module name or its last component ("c_proj" adapts both
// GPT-2 c_proj maps).
bool is_targeted(const SimRun& run, const std::string& module);

// Unsloth's patch_peft_model (models/llama.py): a group of projections (q/k/v, o, or the MLP's
// gate/up/down) runs as one fused Function only with lora_dropout 0 and every projection of the
// group a LoRA layer whose base has no bias (DoRA, which also blocks it, is not modelled).
bool unsloth_fuses(const Family& f, const SimRun& run, const std::vector<std::string>& modules);

}  // namespace sparkops::plan::sim
