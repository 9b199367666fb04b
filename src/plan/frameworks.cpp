#include "plan/frameworks.hpp"

#include <fmt/format.h>

namespace sparkops::plan {

const std::vector<FrameworkPreset>& framework_presets() {
  static const std::vector<FrameworkPreset> presets = {
      {Framework::hf, "hf", "transformers 4.46 + peft 0.13",
       "HF Trainer + PEFT: fp32-upcast cross-entropy, fp32 adapters, LoRA dropout 0, foreach "
       "AdamW; several GPUs: DDP, accumulation under no_sync"},
      {Framework::trl, "trl", "trl 1.9.0 (transformers >= 4.56.2, torch >= 2.8)",
       "SFTTrainer: chunked_nll loss (checkpointed 256-token fp32 chunks, no full logits), "
       "gradient checkpointing on, LoRA dropout 0.05 (trl sft), fp32 adapters, fused AdamW, "
       "padded batches (packing off); several GPUs: DDP"},
      {Framework::unsloth, "unsloth", "unsloth 2025.9.9 + unsloth_zoo 2025.9.12",
       "\"unsloth\" offloaded checkpointing (layer inputs to pinned host memory: still in a "
       "unified pool), fused CE above 1024 tokens a batch, LoRA dropout 0, fp32 adapters"},
      {Framework::axolotl, "axolotl", "axolotl 0.18.0 (examples/llama-3)",
       "sample packing, flash attention, checkpointing on, LoRA dropout 0.05, fp32 adapters; "
       "optimizer by method: 8-bit AdamW (LoRA), paged 32-bit AdamW (QLoRA), paged 8-bit AdamW "
       "(full)"},
      {Framework::llamafactory, "llamafactory", "LLaMA-Factory 0.9.4",
       "lora on all linears, LoRA dropout 0, trainable params upcast to fp32, reentrant "
       "checkpointing on, packing off for sft, HF loss, foreach AdamW; several GPUs: DDP"},
      {Framework::torchtune, "torchtune", "torchtune 0.6.1 (recipes/configs/llama3_1)",
       "chunked-output CE (fp32 log-softmax kept as HF), adapters in the model dtype, LoRA "
       "dropout 0, activation checkpointing on, fused AdamW; several GPUs: FSDP2, gradients "
       "reduce-scattered every micro-batch"},
      {Framework::litgpt, "litgpt", "litgpt 0.4, lightning 2.3, bitsandbytes 0.42.0",
       "chunked head + CE, model-dtype adapters, LoRA dropout 0.05, previous graph held into "
       "the next forward; QLoRA: 4-bit lm_head, fp16 quant state, inputs kept, PagedAdamW; "
       "several GPUs: FSDP per Block, accumulation under no_backward_sync"},
      {Framework::nemo, "nemo", "NeMo 2.x llm recipes, Megatron-Core",
       "distributed optimizer (fp32 main params and Adam states sharded across ranks), fp32 "
       "gradient buffer, adapters in the model dtype, LoRA dropout 0, no recompute"},
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

std::string framework_choices() {
  std::string choices;
  for (const auto& p : framework_presets()) {
    if (!choices.empty()) choices += "|";
    choices += p.name;
  }
  return choices;
}

namespace {

// The HF Trainer + PEFT stack several presets build on: PEFT LoraConfig(lora_dropout=0.0) and
// get_peft_model(autocast_adapter_dtype=True) keep adapters fp32; transformers ForCausalLMLoss
// upcasts logits to fp32; torchrun without an FSDP/DeepSpeed config wraps the model in DDP and
// Accelerate's accumulate() runs non-final micro-batches under no_sync.
void hf_stack(RunConfig& run) {
  run.adapter_fp32 = true;
  run.lora_dropout = 0.0;
  run.loss = LossKind::hf;
  run.shard = ShardMode::ddp;
  run.fsdp_no_sync = true;
}

}  // namespace

void apply_framework(Framework f, RunConfig& run) {
  const bool qlora = run.method == Method::qlora;
  run.framework = f;
  switch (f) {
    case Framework::hf:
      // transformers 4.46 TrainingArguments: default_optim "adamw_torch" (foreach).
      hf_stack(run);
      break;
    case Framework::trl:
      // trl/trainer/sft_config.py SFTConfig: gradient_checkpointing=True (SFTTrainer sets
      // use_reentrant=False), packing=False, padding_free=False, loss_type None ->
      // "chunked_nll" unless use_liger_kernel (__post_init__); sft_trainer.py
      // _chunked_cross_entropy_loss with _CHUNKED_LM_HEAD_CHUNK_SIZE = 256.
      // trl/trainer/model_config.py ModelConfig.lora_dropout = 0.05 (the `trl sft` CLI).
      // pyproject: transformers>=4.56.2, whose TrainingArguments default to adamw_torch_fused
      // from torch 2.8 (transformers PR #37358).
      hf_stack(run);
      run.loss = LossKind::chunked_nll;
      run.grad_ckpt = GradCkpt::full;
      run.lora_dropout = 0.05;
      run.fused_adamw = true;
      break;
    case Framework::unsloth:
      // unsloth/models/llama.py FastLlamaModel.get_peft_model(lora_dropout=0.0,
      // use_gradient_checkpointing="unsloth"): unsloth_zoo gradient_checkpointing.py
      // UnslothCheckpointFunction copies each layer input to a pin_memory buffer;
      // CausalLM_fast_forward: unsloth_fused_ce_loss unless bsz*q_len <= 1024;
      // peft get_peft_model keeps adapters fp32.
      hf_stack(run);
      run.grad_ckpt = GradCkpt::offload;
      run.loss = LossKind::fused;
      run.fused_loss_above_tokens = 1024;
      break;
    case Framework::axolotl:
      // examples/llama-3/lora-8b.yml, qlora.yml, fft-8b.yaml: lora_dropout 0.05,
      // sample_packing true, gradient_checkpointing true, attn_implementation
      // flash_attention_2; optimizer adamw_bnb_8bit / paged_adamw_32bit / paged_adamw_8bit.
      hf_stack(run);
      run.lora_dropout = 0.05;
      run.grad_ckpt = GradCkpt::full;
      run.attn = Attn::flash;
      run.optim = run.method == Method::full ? Optim::paged_adamw8bit
                  : qlora                    ? Optim::paged_adamw
                                             : Optim::adamw8bit;
      break;
    case Framework::llamafactory:
      // hparams/finetuning_args.py: finetuning_type "lora", lora_target "all",
      // lora_dropout 0.0; model/adapter.py casts trainable params to fp32 (unless pure_bf16);
      // hparams/model_args.py: disable_gradient_checkpointing False, use_reentrant_gc True;
      // hparams/data_args.py: packing None (on only for pre-training).
      hf_stack(run);
      run.grad_ckpt = GradCkpt::full;
      run.lora_targets = LoraTargets::all_linear;
      break;
    case Framework::torchtune:
      // recipes/configs/llama3_1/8B_{lora,qlora}_single_device.yaml: lora_dropout 0.0,
      // loss CEWithChunkedOutputLoss, optimizer torch.optim.AdamW fused: True,
      // enable_activation_checkpointing True, enable_activation_offloading False; LoRALinear is
      // built under training.set_default_dtype(bf16); distributed recipes shard with FSDP2
      // fully_shard and reduce-scatter every backward (no no_sync).
      run.adapter_fp32 = false;
      run.lora_dropout = 0.0;
      run.loss = LossKind::hf;
      run.grad_ckpt = GradCkpt::full;
      run.fused_adamw = true;
      run.shard = ShardMode::fsdp;
      run.fsdp_no_sync = false;
      break;
    case Framework::litgpt:
      // litgpt/lora.py: LoRA A/B created under the bf16-true init context; finetune/lora.py
      // setup(lora_dropout=0.05) and config_hub/finetune/*/lora.yaml; model(...,
      // lm_head_chunk_size=128) + utils.chunked_cross_entropy; the loop rebinds `logits` and
      // `loss` only after the next forward; scripts/convert_hf_checkpoint.py copies a tied
      // embedding into lm_head; LoRAQKVLinear adapts the fused qkv from one dropout;
      // finetune/*.py: FSDPStrategy(auto_wrap_policy={Block}) with more than one device and
      // fabric.no_backward_sync(model, enabled=is_accumulating).
      run.adapter_fp32 = false;
      run.lora_dropout = 0.05;
      run.loss = LossKind::chunked;
      run.loop_holds_graph = true;
      run.separate_head = true;
      run.fused_qkv_lora = true;
      run.shard = ShardMode::fsdp;
      run.fsdp_no_sync = true;
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
    case Framework::nemo:
      // llm/recipes/finetune_default.py: MegatronStrategy, no recompute;
      // recipes/optim/adam.py distributed_fused_adam_with_cosine_annealing:
      // OptimizerConfig(use_distributed_optimizer=True) keeps fp32 main params and Adam states
      // sharded across data-parallel ranks; recipes/precision/mixed_precision.py bf16_mixed:
      // params_dtype bf16, grad_reduce_in_fp32=True (an fp32 main_grad buffer); llm/peft/lora.py
      // LoRA(dropout=0.0), adapters built in params_dtype.
      run.adapter_fp32 = false;
      run.lora_dropout = 0.0;
      run.loss = LossKind::hf;
      run.grad_ckpt = GradCkpt::none;
      run.fp32_grads = true;
      run.fp32_optimizer_states = true;
      run.shard = ShardMode::zero1;
      run.fsdp_no_sync = false;
      break;
  }
}

}  // namespace sparkops::plan
