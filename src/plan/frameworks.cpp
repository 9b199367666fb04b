#include "plan/frameworks.hpp"

#include <fmt/format.h>

namespace sparkops::plan {

const std::vector<FrameworkPreset>& framework_presets() {
  static const std::vector<FrameworkPreset> presets = {
      {Framework::hf, "hf", "transformers 4.46 + peft 0.13",
       "HF Trainer + PEFT: fp32-upcast cross-entropy, fp32 adapters, LoRA dropout 0"},
      {Framework::litgpt, "litgpt", "litgpt 0.4, lightning 2.3, bitsandbytes 0.42.0",
       "chunked head + CE, model-dtype adapters, LoRA dropout 0.05, previous graph held into "
       "the next forward; QLoRA: 4-bit lm_head, fp16 quant state, inputs kept, PagedAdamW"},
  };
  return presets;
}

const FrameworkPreset& framework_preset(Framework f) {
  for (const auto& p : framework_presets())
    if (p.id == f) return p;
  return framework_presets().front();
}

Result<Framework> parse_framework(std::string_view s) {
  std::string choices;
  for (const auto& p : framework_presets()) {
    if (p.name == s) return p.id;
    if (!choices.empty()) choices += "|";
    choices += p.name;
  }
  return fail(Errc::invalid_argument,
              fmt::format("--framework: unknown value \"{}\" (one of {})", s, choices));
}

void apply_framework(Framework f, RunConfig& run) {
  const bool qlora = run.method == Method::qlora;
  run.framework = f;
  switch (f) {
    case Framework::hf:
      // peft LoraConfig: lora_dropout 0.0; tuners_utils autocast_adapter_dtype=True keeps
      // adapters fp32; transformers ForCausalLMLoss upcasts logits to fp32.
      run.adapter_fp32 = true;
      run.lora_dropout = 0.0;
      run.loss = LossKind::hf;
      break;
    case Framework::litgpt:
      // litgpt/lora.py: LoRA A/B created under the bf16-true init context; finetune/lora.py
      // setup(lora_dropout=0.05) and config_hub/finetune/*/lora.yaml; model(...,
      // lm_head_chunk_size=128) + utils.chunked_cross_entropy; the loop rebinds `logits` and
      // `loss` only after the next forward; scripts/convert_hf_checkpoint.py copies a tied
      // embedding into lm_head; LoRAQKVLinear adapts the fused qkv from one dropout.
      run.adapter_fp32 = false;
      run.lora_dropout = 0.05;
      run.loss = LossKind::chunked;
      run.loop_holds_graph = true;
      run.separate_head = true;
      run.fused_qkv_lora = true;
      if (qlora) {
        // pyproject pins bitsandbytes==0.42.0 (MatMul4Bit ctx.tensors = (A, B)); Fabric's
        // BitsandbytesPrecision replaces every nn.Linear and _Linear4bit._quantize_weight
        // quantizes from .half(); utils.instantiate_bnb_optimizer: bnb.optim.PagedAdamW;
        // config_hub qlora.yaml: quantize bnb.nf4 (no double quantization).
        run.bnb_saves_input = true;
        run.bnb_quant_fp16 = true;
        run.quantize_head = true;
        run.optim = Optim::paged_adamw;
        run.double_quant = DoubleQuant::off;
      }
      break;
  }
}

}  // namespace sparkops::plan
