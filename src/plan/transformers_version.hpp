#pragma once
// The installed Hugging Face transformers release (`plan --transformers VERSION`, config
// plan.transformers), and the HF loss program it runs: LlamaForCausalLM.forward and
// loss/loss_utils.py ForCausalLMLoss changed what exists at the loss twice (docs/estimator.md,
// "Activations, by mechanism": the HF loss by release).

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "plan/estimator.hpp"

namespace sparkops::plan {

struct TransformersVersion {
  std::uint32_t major = 0, minor = 0, patch = 0;
  std::string text() const;  // "4.46.0"
};

// "4.46", "4.46.0", "v4.46.1", "4.46.0.dev0", "4.47.0rc1", "4.48.3.post1", "4.46.0+cu121":
// MAJOR.MINOR[.PATCH] with an optional leading v, a PEP 440 pre/dev/post suffix and a local
// label, all of which name their release's program (transformers changes the loss code between
// minor releases; a main-branch .dev0 build from before the change that defines its release still
// runs the previous program, which the text cannot tell). Anything else is an error naming `what`
// (the flag or config key).
Result<TransformersVersion> parse_transformers_version(std::string_view text,
                                                       std::string_view what = "--transformers");

// The loss program LlamaForCausalLM + ForCausalLMLoss run at that release:
// <= 4.45 hf_shifted (the fp32 logits and their shifted copy, the model-dtype logits dead),
// 4.46-4.48 hf_shifted_kept (the same beside the caller's model-dtype logits), >= 4.49 hf
// (labels padded and shifted, no logits copy; transformers PR #35646).
LossKind hf_loss_for(const TransformersVersion& v);

// hf, hf_shifted or hf_shifted_kept: a loss program of the HF model's own code.
bool is_hf_model_loss(LossKind l);

// TrainingArguments' default optimizer at that release is torch's fused AdamW
// (`adamw_torch_fused` when torch >= 2.8, transformers PR #37358, merged 2025-07-10 and first
// released in 4.54.0); before it `adamw_torch`, the foreach implementation. The torch half is
// taken as met: a GB10 needs a torch >= 2.9 build, and the releases this reads are that era's.
bool trainer_defaults_to_fused_adamw(const TransformersVersion& v);

}  // namespace sparkops::plan
