#include "cli/plan_flags.hpp"

#include <fmt/format.h>

#include "base/text.hpp"
#include "base/units.hpp"
#include "plan/frameworks.hpp"
#include "plan/sharding.hpp"

namespace sparkops::cli {

void add_plan_flags(CLI::App* cmd, PlanFlags& f) {
  cmd->add_option("MODEL", f.model,
                  "A model directory, config.json, .safetensors file or index, or .gguf; "
                  "ORG/NAME[@REV] from the Hugging Face cache, else the Hub (`plan` only; headers "
                  "only; HF_HUB_OFFLINE=1 stays offline); or a catalogue name (see --list)");
  cmd->add_option("--params", f.params,
                  "Bare parameter count instead of MODEL: 70B, 7.6e9, 8030261248");
  cmd->add_option("--hidden", f.hidden, "With --params: hidden size");
  cmd->add_option("--layers", f.layers, "With --params: number of layers");
  cmd->add_option("--heads", f.heads, "With --params: attention heads");
  cmd->add_option("--kv-heads", f.kv_heads, "With --params: key/value heads (GQA)");
  cmd->add_option("--intermediate", f.intermediate, "With --params: MLP intermediate size");
  cmd->add_option("--vocab", f.vocab, "With --params: vocabulary size");
  cmd->add_flag("--tied", f.tied, "With --params: input and output embeddings are tied");
  cmd->add_option("--mlp", f.mlp, "With --params: gated (SwiGLU/GeGLU, 3 matrices) | plain (2)");
  cmd->add_option(
      "--norm", f.norm,
      "With --params: rms | layer (--mlp plain --norm layer: GPT-2's sequential block)");
  cmd->add_flag("--parallel-block", f.parallel_block,
                "With --params: attention and MLP read the same input (GPT-NeoX, Phi, Falcon)");
  cmd->add_option("--method", f.method, "full | lora | qlora")->capture_default_str();
  cmd->add_option("--precision", f.precision,
                  "bf16 | fp16 | fp32 | mixed (mixed = fp32 master weights; with LoRA an fp32 "
                  "base computed in bf16)")
      ->capture_default_str();
  cmd->add_option("--optim", f.optim,
                  "adamw | adamw8bit | paged_adamw | paged_adamw8bit | adafactor | sgd; default: "
                  "the framework's (adamw; axolotl: adamw8bit LoRA, paged_adamw QLoRA, "
                  "paged_adamw8bit full; LitGPT QLoRA: paged_adamw)");
  cmd->add_option("--batch", f.batch, "Micro-batch size; a list (1,2,4) prints a fit matrix")
      ->capture_default_str();
  cmd->add_option("--seq", f.seq, "Sequence/packing length; a list (1024,2048) prints a fit matrix")
      ->capture_default_str();
  cmd->add_option("--grad-ckpt", f.grad_ckpt,
                  "none | full | offload (checkpointed layer inputs in pinned host memory: still "
                  "in a unified pool); default: the framework's (full; unsloth offload, nemo "
                  "none)");
  cmd->add_option("--attn", f.attn,
                  "flash | sdpa | eager | math (torch SDPA's math fallback: a mask before torch "
                  "2.1, unequal heads, ...; keeps the probabilities, s x s a head) | xformers "
                  "(Unsloth's backend after flash-attn: k and v copied to the query heads); "
                  "default: the framework's (sdpa; axolotl flash)");
  cmd->add_option("--lora-rank", f.lora_rank,
                  "LoRA rank r; default: the framework's (swift 8), else 16");
  cmd->add_option("--lora-targets", f.lora_targets, "all-linear | attn | a list: q_proj,v_proj,...")
      ->capture_default_str();
  cmd->add_flag("--kbit-prep", f.kbit_prep,
                "QLoRA: prepare_model_for_kbit_training (fp32 upcast of the kept layers)");
  cmd->add_flag("--kept-fp16", f.kept_fp16,
                "QLoRA: the unquantized modules are fp16 (loaded without torch_dtype under "
                "transformers < 4.37) in a bf16 run: autocast casts the lm_head at every call");
  cmd->add_flag("--lora-head", f.lora_head,
                "LoRA on the lm_head too (LitGPT lora_head: true; PEFT target lm_head)");
  cmd->add_flag("--compile", f.compile,
                "The run is under torch.compile (torchtune compile: True; transformers "
                "torch_compile=True): the HF loss and torchtune's chunked loss keep the "
                "model-dtype logits, not fp32 copies; layers are counted as eager (an upper "
                "bound)");
  cmd->add_option("--optimizer-in-bwd", f.optimizer_in_bwd,
                  "on | off: a full fine-tune steps each parameter inside the backward, so no "
                  "full set of gradients exists (torchtune optimizer_in_bwd; needs --grad-accum "
                  "1); default: the framework's (torchtune full on one GPU: on, with "
                  "PagedAdamW8bit)");
  cmd->add_option("--framework", f.framework,
                  "hf | trl | unsloth | axolotl | llamafactory | torchtune | litgpt | nemo | "
                  "swift: the framework whose memory defaults to assume (loss path, LoRA rank "
                  "and dropout, adapter dtype, checkpointing and what it offloads, optimizer "
                  "implementation, default accumulation, how it shards across GPUs; each read "
                  "from its code at a named version, "
                  "docs/estimator.md); default: config plan.framework, else hf with the range "
                  "the presets span");
  cmd->add_option(
      "--loss", f.loss,
      "hf (fp32 upcast cross-entropy, transformers >= 4.49) | hf_shifted (the same "
      "with the shifted .contiguous() copy of the fp32 logits: transformers <= 4.45 "
      "and remote code of that era, e.g. Qwen-1, ChatGLM3, Baichuan-2) | hf_shifted_kept (that "
      "shifted fp32 copy beside the caller's model-dtype logits: transformers 4.46-4.48) | "
      "chunked "
      "(LitGPT chunked head + CE; a full fine-tune under --framework litgpt: the whole head's "
      "logits, CE in 128-row chunks) | fused "
      "(Liger fused linear cross-entropy: small chunks, no logits) | fused_unsloth "
      "(Unsloth's fused CE: one compiled chunk of logits) | chunked_nll (TRL: checkpointed "
      "256-token fp32 chunks) | chunked_output (torchtune: 8 head chunks, each "
      "upcast in turn) | megatron (Megatron-Core vocab-parallel CE: softmax in place "
      "on one fp32 copy); default: the framework's (for hf, axolotl, llamafactory, swift: the "
      "HF loss of --transformers)");
  cmd->add_option("--transformers", f.transformers,
                  "Installed transformers release (4.46, 4.46.0, v4.47.1, 4.48.0.dev0): picks "
                  "the HF loss where the framework's loss is the model's own: <= 4.45 "
                  "hf_shifted, 4.46-4.48 hf_shifted_kept, >= 4.49 hf; and the Trainer's default "
                  "AdamW: foreach, fused from 4.54; --loss and --optim win; default: "
                  "config plan.transformers, else the framework's (hf 4.57.6, axolotl 5.14.1, "
                  "llamafactory 4.51-4.57, swift 4.57.6)");
  cmd->add_flag("--chunked-loss", f.chunked_loss, "Same as --loss chunked");
  cmd->add_option("--lora-dropout", f.lora_dropout,
                  "LoRA dropout probability (> 0 keeps a mask and a copy per adapted input); "
                  "default: the framework's");
  cmd->add_option("--adapter-dtype", f.adapter_dtype,
                  "fp32 (PEFT) | model (LitGPT/torchtune; peft 0.7 as ms-swift 1.x pinned it); "
                  "default: the framework's");
  cmd->add_option("--bnb-version", f.bnb_version,
                  "QLoRA: bitsandbytes release (<= 0.43.1 keeps every 4-bit linear's input until "
                  "the graph is freed; < 0.43 quantizes from fp16, so a bf16 run dequantizes to "
                  "two copies); default: the framework's");
  cmd->add_flag("--no-double-quant", f.no_double_quant, "QLoRA: NF4 without double quantization");
  cmd->add_option("--nodes", f.nodes, "Machines the run spans (a DGX Spark is one GPU each)")
      ->capture_default_str();
  cmd->add_option("--gpus", f.gpus, "GPUs per machine (data-parallel ranks = nodes x gpus)")
      ->capture_default_str();
  cmd->add_option("--shard", f.shard,
                  "With more than one rank: ddp (replicated, gradient buckets) | fsdp (FULL_SHARD "
                  "per decoder layer) | zero1 (optimizer states sharded: Megatron's distributed "
                  "optimizer) | zero2 | zero3 (DeepSpeed); default: the framework's (ddp; "
                  "litgpt/torchtune fsdp, nemo zero1)");
  cmd->add_option("--grad-accum", f.grad_accum,
                  "Micro-batches per optimizer step (FSDP under no_sync keeps full gradients "
                  "between them); default: the framework's (swift: enough for 16 sequences a "
                  "step across all ranks), else 1");
  cmd->add_option("--lengths", f.lengths,
                  "fixed (every micro-batch holds --seq tokens: packing, or padding to the "
                  "maximum) | varying (unpacked data, --seq is the longest): varying prints the "
                  "caching allocator's reserve as a range")
      ->capture_default_str();
  cmd->add_flag("--expandable-segments", f.expandable_segments,
                "The run sets PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True");
  cmd->add_option(
         "--budget", f.budget,
         "Memory budget: a size (24, 24G and 24GiB are 24 GiB, as free -g; 24GB is 24 x 10^9 "
         "bytes) or auto (the live pool, or the --root tree's)")
      ->capture_default_str();
  cmd->add_option(
      "--overhead", f.overhead,
      "OS/driver overhead subtracted from MemAvailable (default: config pool.overhead)");
  cmd->add_option("--serve", f.serving.serve,
                  "Plan an inference server instead of training: vllm | sglang | ollama | "
                  "llamacpp | trtllm (the engine's own flags follow `--` or go in --serve-args)")
      ->type_name("ENGINE");
  cmd->add_option("--serve-args", f.serving.serve_args,
                  "The engine's flags, spelled as the engine spells them: \"--max-model-len 32768 "
                  "--gpu-memory-utilization 0.5\", \"-c 16384 -np 4\", \"OLLAMA_NUM_PARALLEL=4\"")
      ->type_name("ARGS");
  cmd->add_option("--beside", f.serving.beside,
                  "A command line to run beside the planned job (repeatable), e.g. \"vllm serve "
                  "ORG/NAME --gpu-memory-utilization 0.5\": one verdict for the combination")
      ->type_name("CMD");
  cmd->add_flag("--beside-running", f.serving.beside_running,
                "Judge the planned job beside what runs now (the workloads `procs` lists)");
  cmd->add_option("--device-total", f.device_total,
                  "The device's memory as CUDA reports it (torch.cuda.get_device_properties()."
                  "total_memory; an A100-80GB 79.25 GiB, GB10 about 121.6 GiB): training caps the "
                  "caching allocator's cache at it less the CUDA context and NCCL's buffers "
                  "(default: the card's free memory; on a unified machine MemAvailable, which it "
                  "bounds, less the host side too); fraction engines take it as their base "
                  "(default: the card's total, else the pool total)")
      ->type_name("SIZE");
}
}  // namespace sparkops::cli
