#include "plan/frameworks.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <optional>

namespace sparkops::plan {

const std::vector<FrameworkPreset>& framework_presets() {
  static const std::vector<FrameworkPreset> presets = {
      {Framework::hf, "hf", "transformers 4.57.6 + peft >= 0.13",
       "HF Trainer + PEFT: fp32-upcast cross-entropy, fp32 adapters, LoRA dropout 0, fused "
       "AdamW (foreach before transformers 4.54); several GPUs: DDP, accumulation under no_sync",
       "4.57.6"},
      {Framework::trl, "trl", "trl 1.9.0 (transformers >= 4.56.2, torch >= 2.8)",
       "SFTTrainer: chunked_nll loss (checkpointed 256-token fp32 chunks, no full logits), "
       "gradient checkpointing on, LoRA dropout 0.05 (trl sft), fp32 adapters, fused AdamW, "
       "padded batches (packing off); several GPUs: DDP"},
      {Framework::unsloth, "unsloth", "unsloth 2026.8.19 + unsloth_zoo 2026.8.13",
       "\"unsloth\" offloaded checkpointing from 512 tokens (layer inputs to pinned host memory "
       "from the first step: still in a unified pool), fused CE in chunks of at most 4 GiB of "
       "fp32 logits, LoRA dropout 0, fp32 adapters"},
      {Framework::axolotl, "axolotl", "axolotl 0.18.0 (examples/llama-3)",
       "sample packing, flash attention, checkpointing on, LoRA dropout 0.05, fp32 adapters; "
       "optimizer by method: 8-bit AdamW (LoRA), paged 32-bit AdamW (QLoRA), paged 8-bit AdamW "
       "(full)",
       // pyproject.toml at v0.18.0: transformers==5.14.1.
       "5.14.1"},
      {Framework::llamafactory, "llamafactory", "LLaMA-Factory 0.9.4",
       "lora on all linears, LoRA dropout 0, trainable params upcast to fp32, reentrant "
       "checkpointing on, packing off for sft, HF loss, fused AdamW; several GPUs: DDP",
       // pyproject.toml and extras/misc.py check_version at v0.9.4: >=4.51.0,<=4.57.1.
       "4.51.0-4.57.1"},
      {Framework::torchtune, "torchtune", "torchtune 0.6.1 (recipes/configs/llama3_1)",
       "chunked-output CE (8 head chunks, each upcast in turn), adapters in the model dtype, LoRA "
       "dropout 0, activation checkpointing on, fused AdamW (a full fine-tune on one GPU: "
       "PagedAdamW8bit stepped in backward); several GPUs: FSDP2, gradients reduce-scattered "
       "every micro-batch"},
      {Framework::litgpt, "litgpt", "litgpt 0.4, lightning 2.3, bitsandbytes 0.42.0",
       "chunked head + CE on Fabric's fp32 copies of the logits (full fine-tune: the whole "
       "head's, CE in 128-row chunks), model-dtype adapters, LoRA "
       "dropout 0.05, previous graph held into the next forward; QLoRA: 4-bit lm_head, fp16 quant "
       "state, inputs kept, PagedAdamW; "
       "several GPUs: FSDP per Block, accumulation under no_backward_sync"},
      {Framework::nemo, "nemo", "NeMo 2.x llm recipes, Megatron-Core",
       "Megatron-Core vocab-parallel cross-entropy (fp32 softmax in place), distributed "
       "optimizer (fp32 main params and Adam states sharded across ranks), fp32 gradient "
       "buffer, adapters in the model dtype, LoRA dropout 0, no recompute"},
      {Framework::swift, "swift", "ms-swift 4.5.2 (transformers >= 4.33, < 5.17; torch >= 2.8)",
       "swift sft: LoRA r8 on all linears, dropout 0.05, fp32 adapters, checkpointing on, the "
       "model's HF loss, fused AdamW, padded batches, accumulation up to 16 sequences a step; "
       "several GPUs: DDP",
       // requirements/framework.txt at v4.5.2: >=4.33,<5.17.0; the README's recommended release
       // (4.57.6, or 5.12.1) runs the >= 4.49 loss either way.
       "4.57.6"},
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

// What a preset sets, as data: an empty field leaves the run's value (the project default or an
// earlier preset field) alone. A new framework is one more row.
struct PresetFields {
  Framework id = Framework::hf;
  std::optional<bool> adapter_fp32;
  std::optional<double> lora_dropout;
  std::optional<LossKind> loss;
  std::optional<GradCkpt> grad_ckpt;
  std::optional<Attn> attn;
  std::optional<LoraTargets> lora_targets;
  std::optional<ShardMode> shard;
  std::optional<bool> fsdp_no_sync;
  std::optional<bool> fused_adamw;
  std::optional<std::uint64_t> fused_loss_above_tokens;
  std::optional<bool> loop_holds_graph;
  std::optional<bool> separate_head;
  std::optional<bool> fused_qkv_lora;
  std::optional<bool> outputs_fp32;
  std::optional<OffloadKind> offload_kind;
  std::optional<bool> fp32_grads;
  std::optional<bool> fp32_optimizer_states;
  // The optimizer by method: full, LoRA, QLoRA.
  std::optional<Optim> optim_full, optim_lora, optim_qlora;
  // A full fine-tune's script returns the whole head's logits (RunConfig::whole_head).
  std::optional<bool> whole_head_full;
  // What the framework's QLoRA path changes (its bitsandbytes version and quantization plugin).
  std::optional<bool> bnb_saves_input;
  std::optional<bool> bnb_quant_fp16;
  std::optional<bool> quantize_head;
  std::optional<DoubleQuant> double_quant;
  // LoRA rank when --lora-rank is not given (the run's default otherwise).
  std::optional<std::uint64_t> lora_rank;
  // Accumulation when --grad-accum is not given: enough micro-batches for this many sequences a
  // step across all ranks (framework_grad_accum).
  std::optional<std::uint64_t> accumulate_to_sequences;
};

// The HF Trainer + PEFT stack several presets build on: PEFT LoraConfig(lora_dropout=0.0) and
// get_peft_model(autocast_adapter_dtype=True) keep adapters fp32; transformers ForCausalLMLoss
// upcasts logits to fp32 (the `hf` loss program is its code from 4.49, transformers PR #35646:
// 4.46-4.48 also made a shifted fp32 `.contiguous()` copy of the logits: hf_shifted_kept, which
// --transformers picks); torchrun without an
// FSDP/DeepSpeed config wraps the model in DDP and Accelerate's accumulate() runs non-final
// micro-batches under no_sync.
PresetFields hf_stack(Framework id) {
  PresetFields p;
  p.id = id;
  p.adapter_fp32 = true;
  p.lora_dropout = 0.0;
  p.loss = LossKind::hf;
  p.shard = ShardMode::ddp;
  p.fsdp_no_sync = true;
  return p;
}

const std::vector<PresetFields>& preset_fields() {
  static const std::vector<PresetFields> rows = [] {
    std::vector<PresetFields> v;
    {
      // transformers 4.57.6 (the last 4.x, whose loss is 4.49's program) TrainingArguments:
      // default_optim "adamw_torch_fused" with torch >= 2.8 (PR #37358, from 4.54.0; a GB10
      // needs torch >= 2.9); --transformers before 4.54 gives foreach back (plan_args.cpp).
      PresetFields p = hf_stack(Framework::hf);
      p.fused_adamw = true;
      v.push_back(p);
    }
    {
      // trl/trainer/sft_config.py SFTConfig: gradient_checkpointing=True (SFTTrainer sets
      // use_reentrant=False), packing=False, padding_free=False, loss_type None ->
      // "chunked_nll" unless use_liger_kernel (__post_init__); sft_trainer.py
      // _chunked_cross_entropy_loss with _CHUNKED_LM_HEAD_CHUNK_SIZE = 256.
      // trl/trainer/model_config.py ModelConfig.lora_dropout = 0.05 (the `trl sft` CLI).
      // pyproject: transformers>=4.56.2, whose TrainingArguments default to adamw_torch_fused
      // from torch 2.8 (transformers PR #37358).
      PresetFields p = hf_stack(Framework::trl);
      p.loss = LossKind::chunked_nll;
      p.grad_ckpt = GradCkpt::full;
      p.lora_dropout = 0.05;
      p.fused_adamw = true;
      v.push_back(p);
    }
    {
      // unsloth 2026.8.19 models/llama.py FastLlamaModel.get_peft_model(lora_dropout=0.0,
      // use_gradient_checkpointing="unsloth"), through models/_utils.py
      // apply_unsloth_gradient_checkpointing (plain checkpointing below 512 tokens): unsloth_zoo
      // 2026.8.13 gradient_checkpointing.py UnslothCheckpointFunction copies each layer input
      // above 2 MiB to a pin_memory buffer (RunConfig::offload_kind); CausalLM_fast_forward:
      // unsloth_fused_ce_loss at every length (the <= 1024-token plain-logits branch became a
      // no-op in 2025.10); peft get_peft_model keeps adapters fp32. Its trainer is TRL's
      // SFTTrainer on transformers <= 5.5.0 (pyproject.toml), whose TrainingArguments default to
      // adamw_torch_fused with torch >= 2.8 (transformers_version.hpp
      // trainer_defaults_to_fused_adamw).
      PresetFields p = hf_stack(Framework::unsloth);
      p.grad_ckpt = GradCkpt::offload;
      p.loss = LossKind::fused_unsloth;
      p.fused_adamw = true;
      v.push_back(p);
    }
    {
      // examples/llama-3/lora-8b.yml, qlora.yml, fft-8b.yaml: lora_dropout 0.05,
      // sample_packing true, gradient_checkpointing true, attn_implementation
      // flash_attention_2; optimizer adamw_bnb_8bit / paged_adamw_32bit / paged_adamw_8bit.
      PresetFields p = hf_stack(Framework::axolotl);
      p.lora_dropout = 0.05;
      p.grad_ckpt = GradCkpt::full;
      p.attn = Attn::flash;
      p.optim_full = Optim::paged_adamw8bit;
      p.optim_lora = Optim::adamw8bit;
      p.optim_qlora = Optim::paged_adamw;
      v.push_back(p);
    }
    {
      // hparams/finetuning_args.py: finetuning_type "lora", lora_target "all",
      // lora_dropout 0.0; model/adapter.py casts trainable params to fp32 (unless pure_bf16);
      // hparams/model_args.py: disable_gradient_checkpointing False, use_reentrant_gc True;
      // hparams/data_args.py: packing None (on only for pre-training).
      // Its TrainingArguments keep transformers' default optimizer: at 4.57.1, the newest
      // release its pin allows, fused AdamW (torch >= 2.8).
      PresetFields p = hf_stack(Framework::llamafactory);
      p.grad_ckpt = GradCkpt::full;
      p.fused_adamw = true;
      p.lora_targets = LoraTargets::all_linear;
      v.push_back(p);
    }
    {
      // recipes/configs/llama3_1/8B_{lora,qlora}_single_device.yaml: lora_dropout 0.0,
      // loss CEWithChunkedOutputLoss, optimizer torch.optim.AdamW fused: True,
      // enable_activation_checkpointing True, enable_activation_offloading False; LoRALinear is
      // built under training.set_default_dtype(bf16); distributed recipes shard with FSDP2
      // fully_shard and reduce-scatter every backward (no no_sync). enable_activation_offloading
      // (--grad-ckpt offload) wraps the model's forward in OffloadActivations from the first step.
      PresetFields p;
      p.id = Framework::torchtune;
      p.offload_kind = OffloadKind::torchtune;
      p.adapter_fp32 = false;
      p.lora_dropout = 0.0;
      p.loss = LossKind::chunked_output;
      p.grad_ckpt = GradCkpt::full;
      p.fused_adamw = true;
      p.shard = ShardMode::fsdp;
      p.fsdp_no_sync = false;
      v.push_back(p);
    }
    {
      // litgpt/lora.py: LoRA A/B created under the bf16-true init context; finetune/lora.py
      // setup(lora_dropout=0.05) and config_hub/finetune/*/lora.yaml; model(...,
      // lm_head_chunk_size=128) + utils.chunked_cross_entropy; the loop's `logits` keep the
      // previous graph until the next forward returns (`loss` is a float after backward);
      // scripts/convert_hf_checkpoint.py copies a tied embedding into lm_head; LoRAQKVLinear adapts
      // the fused qkv from one dropout; finetune/*.py: FSDPStrategy(auto_wrap_policy={Block}) with
      // more than one device and fabric.no_backward_sync(model, enabled=is_accumulating). QLoRA:
      // pyproject pins bitsandbytes==0.42.0 (MatMul4Bit ctx.tensors = (A, B)); Fabric's
      // BitsandbytesPrecision replaces every nn.Linear and _Linear4bit._quantize_weight
      // quantizes from .half(); utils.instantiate_bnb_optimizer: bnb.optim.PagedAdamW;
      // config_hub qlora.yaml: quantize bnb.nf4 (no double quantization).
      PresetFields p;
      p.id = Framework::litgpt;
      p.adapter_fp32 = false;
      p.lora_dropout = 0.05;
      p.loss = LossKind::chunked;
      p.loop_holds_graph = true;
      p.separate_head = true;
      p.fused_qkv_lora = true;
      // lightning fabric/wrappers.py _FabricModule.forward: precision.convert_output casts every
      // floating output to torch.get_default_dtype() (fp32 outside the forward context).
      p.outputs_fp32 = true;
      p.shard = ShardMode::fsdp;
      p.fsdp_no_sync = true;
      p.bnb_saves_input = true;
      p.bnb_quant_fp16 = true;
      p.quantize_head = true;
      p.optim_qlora = Optim::paged_adamw;
      p.double_quant = DoubleQuant::off;
      // finetune/full.py (43c44323, a509064d, 00af8b0d fit()): `logits = model(input_ids)`, no
      // lm_head_chunk_size: GPT.forward's one lm_head call, which Fabric hands back as one fp32
      // copy, then chunked_cross_entropy(logits[..., :-1, :], ...) splits its reshape into
      // 128-row chunks.
      p.whole_head_full = true;
      v.push_back(p);
    }
    {
      // llm/recipes/finetune_default.py: MegatronStrategy, no recompute;
      // recipes/optim/adam.py distributed_fused_adam_with_cosine_annealing:
      // OptimizerConfig(use_distributed_optimizer=True) keeps fp32 main params and Adam states
      // sharded across data-parallel ranks; recipes/precision/mixed_precision.py bf16_mixed:
      // params_dtype bf16, grad_reduce_in_fp32=True (an fp32 main_grad buffer); llm/peft/lora.py
      // LoRA(dropout=0.0), adapters built in params_dtype.
      // Loss: Megatron-Core GPTModel.compute_language_model_loss (Megatron-LM d98e8a64,
      // megatron/core/models/common/language_module/language_module.py): the vocab-parallel
      // cross-entropy of tensor_parallel/cross_entropy.py, or with cross_entropy_loss_fusion
      // (NeMo 8cfedd72 llm/gpt/model/base.py GPTConfig: True; the llm recipes' LoRA branch sets it
      // False) fusions/fused_cross_entropy.py's: the same saved softmax either way.
      PresetFields p;
      p.id = Framework::nemo;
      p.adapter_fp32 = false;
      p.lora_dropout = 0.0;
      p.loss = LossKind::megatron;
      p.grad_ckpt = GradCkpt::none;
      p.fp32_grads = true;
      p.fp32_optimizer_states = true;
      p.shard = ShardMode::zero1;
      p.fsdp_no_sync = false;
      v.push_back(p);
    }
    {
      // ms-swift 4.5.2 `swift sft` (--tuner_type lora | full; QLoRA: --quant_method bnb
      // --quant_bits 4). arguments/tuner_args.py TunerArguments: lora_rank 8, lora_dropout 0.05,
      // target_modules ['all-linear'] (pipelines/train/tuner.py get_target_modules ->
      // find_all_linears, lm_head excluded), lora_dtype None, so tuners/peft.py
      // _cast_adapter_dtype_hook leaves peft's autocast_adapter_dtype=True: fp32 adapters.
      // trainers/arguments.py TrainArgumentsMixin: gradient_checkpointing True (mixin.py
      // _fix_gradient_checkpointing: reentrant on one process, not under DDP), loss_type None
      // (the model's own HF loss, template compute_sft_loss), gradient_accumulation_steps None ->
      // ceil(16 / per_device_train_batch_size / world_size) in __post_init__; the optimizer is
      // HF Trainer.create_optimizer (optimizers/base.py) with TrainingArguments.optim, which
      // transformers makes adamw_torch_fused on torch >= 2.8 since PR #37358 (July 2025): the
      // README's recommended torch 2.8.0 / 2.11.0 with transformers 4.57.6 / 5.12.1 (an older
      // torch keeps foreach adamw_torch). Not modelled: use_logits_to_keep (mixin.py
      // get_use_logits_to_keep, prepare_logits_to_keep: logits only from the labelled positions,
      // which the plan has no input for; every token's is an upper bound). base_args.py
      // packing False, template_args.py padding_free False; quant_args.py
      // bnb_4bit_use_double_quant True; deepspeed/fsdp None: torchrun gives DDP.
      PresetFields p = hf_stack(Framework::swift);
      p.lora_dropout = 0.05;
      p.lora_targets = LoraTargets::all_linear;
      p.grad_ckpt = GradCkpt::full;
      p.fused_adamw = true;
      p.double_quant = DoubleQuant::on;
      p.lora_rank = 8;
      p.accumulate_to_sequences = 16;
      v.push_back(p);
    }
    return v;
  }();
  return rows;
}

template <typename T>
void set(T& field, const std::optional<T>& value) {
  if (value) field = *value;
}

}  // namespace

void apply_framework_topology(RunConfig& run, bool optim_given) {
  // recipes/configs/*/*_full_single_device.yaml at v0.6.1: `bitsandbytes.optim.PagedAdamW8bit`,
  // `optimizer_in_bwd: True` (which the recipe refuses with accumulation); the distributed full
  // recipes keep fused AdamW stepped after the backward.
  if (run.framework == Framework::torchtune && run.method == Method::full &&
      run.nodes * run.gpus == 1 && run.grad_accum == 1) {
    if (!optim_given) run.optim = Optim::paged_adamw8bit;
    run.optimizer_in_backward = true;
  }
}

void apply_framework(Framework f, RunConfig& run) {
  run.framework = f;
  const PresetFields* row = nullptr;
  for (const auto& p : preset_fields())
    if (p.id == f) row = &p;
  if (row == nullptr) return;  // every Framework has a row (pinned by the preset tests)
  const PresetFields& p = *row;
  set(run.adapter_fp32, p.adapter_fp32);
  set(run.lora_dropout, p.lora_dropout);
  set(run.loss, p.loss);
  set(run.grad_ckpt, p.grad_ckpt);
  set(run.attn, p.attn);
  set(run.lora_targets, p.lora_targets);
  set(run.shard, p.shard);
  set(run.fsdp_no_sync, p.fsdp_no_sync);
  set(run.fused_adamw, p.fused_adamw);
  set(run.fused_loss_above_tokens, p.fused_loss_above_tokens);
  set(run.loop_holds_graph, p.loop_holds_graph);
  set(run.separate_head, p.separate_head);
  set(run.fused_qkv_lora, p.fused_qkv_lora);
  set(run.outputs_fp32, p.outputs_fp32);
  set(run.offload_kind, p.offload_kind);
  set(run.fp32_grads, p.fp32_grads);
  set(run.fp32_optimizer_states, p.fp32_optimizer_states);
  set(run.lora_rank, p.lora_rank);
  switch (run.method) {
    case Method::full:
      set(run.optim, p.optim_full);
      set(run.whole_head, p.whole_head_full);
      break;
    case Method::lora:
      set(run.optim, p.optim_lora);
      break;
    case Method::qlora:
      set(run.optim, p.optim_qlora);
      set(run.bnb_saves_input, p.bnb_saves_input);
      set(run.bnb_quant_fp16, p.bnb_quant_fp16);
      set(run.quantize_head, p.quantize_head);
      set(run.double_quant, p.double_quant);
      break;
  }
}

std::uint64_t framework_grad_accum(Framework f, std::uint64_t batch, std::uint64_t ranks) {
  const PresetFields* row = nullptr;
  for (const auto& p : preset_fields())
    if (p.id == f) row = &p;
  if (row == nullptr || !row->accumulate_to_sequences || batch == 0 || ranks == 0) return 1;
  // max(1, ceil(N / batch / ranks)) without overflow for any batch and rank count.
  const std::uint64_t n = *row->accumulate_to_sequences;
  if (batch >= n || ranks >= n || batch * ranks >= n) return 1;
  return (n + batch * ranks - 1) / (batch * ranks);
}

}  // namespace sparkops::plan
