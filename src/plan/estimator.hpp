#pragma once
// The footprint terms of one training run (docs/estimator.md gives every formula and its source).
// Pure functions of a ModelShape and a RunConfig; bytes everywhere.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "config/plan_defaults.hpp"
#include "models/model_shape.hpp"

namespace sparkops::plan {

// plan speaks the models module's vocabulary: the shape types are models' own.
using models::active_params_excluding_embedding;
using models::Architecture;
using models::count_params;
using models::layer_linears;
using models::LinearMap;
using models::MlpKind;
using models::ModelShape;
using models::ParamCounts;

enum class Method { full, lora, qlora };
enum class Precision { bf16, fp16, fp32, mixed };
enum class Optim { adamw, adamw8bit, paged_adamw, paged_adamw8bit, adafactor, sgd };
enum class GradCkpt { none, full, offload };
// Whose offloading --grad-ckpt offload is (docs/estimator.md "Framework presets"): Unsloth's
// offloaded checkpointing (unsloth_zoo 2026.8.13 UnslothCheckpointFunction) or torchtune's
// OffloadActivations.
enum class OffloadKind { unsloth, torchtune };
// flash-attn 2 | SDPA's flash/efficient kernels | eager | SDPA's math fallback (s^2 kept)
// xformers: memory_efficient_attention as Unsloth's run_attention calls it (its backend after
// flash-attn, when installed): k and v expanded and reshaped to the query heads for training.
enum class Attn { flash, sdpa, eager, math, xformers };
enum class LoraTargets { all_linear, attn, list };
enum class KbitPrep { off, on };
// HF upcast CE | the same before transformers 4.46 (a shifted copy of the fp32 logits) |
// transformers 4.46-4.48 (that shifted copy beside the caller's model-dtype logits) |
// chunked (LitGPT) | fused linear-CE (Liger) | Unsloth's fused CE | TRL's checkpointed 256-token
// chunks | torchtune's chunked
// output | Megatron-Core's vocab-parallel CE (in place on one fp32 copy)
enum class LossKind {
  hf,
  hf_shifted,
  hf_shifted_kept,
  chunked,
  fused,
  fused_unsloth,
  chunked_nll,
  chunked_output,
  megatron
};
// presets: plan/frameworks.hpp
enum class Framework { hf, trl, unsloth, axolotl, llamafactory, torchtune, litgpt, nemo, swift };
// How the static terms are split across data-parallel ranks: plan/sharding.hpp
enum class ShardMode { ddp, fsdp, zero1, zero2, zero3 };
enum class DoubleQuant { on, off };

std::string_view method_name(Method m);
std::string_view precision_name(Precision p);
std::string_view optim_name(Optim o);
std::string_view grad_ckpt_name(GradCkpt g);
std::string_view attn_name(Attn a);
std::string_view loss_name(LossKind l);
Result<Method> parse_method(std::string_view s);
Result<Precision> parse_precision(std::string_view s);
Result<Optim> parse_optim(std::string_view s);
Result<GradCkpt> parse_grad_ckpt(std::string_view s);
Result<Attn> parse_attn(std::string_view s);
Result<LossKind> parse_loss(std::string_view s);

// cuBLAS's workspace per (handle, stream) when CUBLAS_WORKSPACE_CONFIG is unset
// (aten/src/ATen/cuda/CublasHandlePool.cpp parseChosenWorkspaceSize): 32 MiB (4096 KiB x 8) on
// compute capability 9.x (GH200) and, in current torch, 10.x-12.x (Thor, GB10); ":4096:2:16:8"
// (8 MiB + 128 KiB) on older GPUs. cuBLASLt's: 1 MiB (parseCUDABlasLtWorkspaceSize).
inline constexpr std::uint64_t kCublasWorkspaceHopperBytes = 4096ULL * 8 * 1024;
inline constexpr std::uint64_t kCublasWorkspaceOlderBytes = 4096ULL * 1024 * 2 + 16 * 1024 * 8;
inline constexpr std::uint64_t kCublasLtWorkspaceBytes = 1024ULL * 1024;

// The process's host side on a unified machine, outside torch's allocator but in the same pool:
// the [plan] config section's (config/plan_defaults.hpp, where its defaults are written;
// docs/estimator.md "The whole pool" gives each one's measurement).
using HostSide = config::PlanHostSide;

// What a DGX Spark user most often runs: bf16 LoRA r=16 on all linear layers, AdamW, batch 1,
// packing 2048, gradient checkpointing, SDPA/flash attention, one machine.
struct RunConfig {
  Framework framework = Framework::hf;  // the preset the framework-decided fields came from
  // The transformers release the user named (--transformers, config plan.transformers), as
  // "4.46.0"; empty: the preset's (FrameworkPreset::transformers). It picked `loss` when the
  // preset's loss is the HF model's own and no --loss was given (plan/transformers_version.hpp).
  std::string transformers;
  Method method = Method::lora;
  Precision precision = Precision::bf16;
  Optim optim = Optim::adamw;
  std::uint64_t batch = 1;
  std::uint64_t seq = 2048;
  GradCkpt grad_ckpt = GradCkpt::full;
  Attn attn = Attn::sdpa;
  std::uint64_t lora_rank = 16;
  LoraTargets lora_targets = LoraTargets::all_linear;
  std::vector<std::string> lora_target_names;  // for LoraTargets::list: "q_proj", "v_proj", ...
  KbitPrep kbit_prep = KbitPrep::off;
  LossKind loss = LossKind::hf;
  DoubleQuant double_quant = DoubleQuant::on;  // QLoRA NF4 with double quantization
  std::uint64_t nodes = 1;                     // machines (a DGX Spark has one GPU each)
  std::uint64_t gpus = 1;                      // GPUs per machine; ranks = nodes x gpus
  ShardMode shard = ShardMode::ddp;            // with more than one rank (the framework's default)
  std::uint64_t grad_accum = 1;                // micro-batches accumulated per optimizer step
  // The framework accumulates under no_sync (Accelerate accumulate(), Lightning
  // no_backward_sync): FSDP then keeps full, unsharded gradients between steps.
  bool fsdp_no_sync = true;
  bool fused_adamw = false;  // torch AdamW(fused=True): no foreach temporary at the step
  // Megatron-Core (NeMo): an fp32 main_grad buffer (grad_reduce_in_fp32) and fp32 main params
  // with fp32 Adam states, whatever the parameter dtype.
  bool fp32_grads = false;
  bool fp32_optimizer_states = false;
  // A fused linear-cross-entropy that the framework uses only above this many tokens a batch
  // (Unsloth: the plain head below 1024); 0 = always.
  std::uint64_t fused_loss_above_tokens = 0;
  double lora_dropout = 0.0;     // PEFT LoraConfig default
  bool bnb_saves_input = false;  // older bitsandbytes MatMul4Bit kept ctx.tensors = (A, B)
  bool adapter_fp32 = true;      // PEFT keeps adapters fp32; LitGPT/torchtune the model dtype
  // How the training loop and the quantization plugin behave (docs/estimator.md "Framework
  // mechanisms" sources each): the loop keeps the previous step's graph (through `logits`) alive
  // through the next forward until the model returns (LitGPT finetune/*.py); the 4-bit weights were
  // quantized from fp16 and compute in bf16, so each dequantization is followed by a full .to()
  // copy (Lightning Fabric BitsandbytesPrecision); every nn.Linear, the lm_head included, is 4-bit
  // (Fabric); the lm_head is its own matrix even for a tied-embedding model (LitGPT's GPT).
  bool loop_holds_graph = false;
  // The loop calls optimizer.zero_grad(set_to_none=True) between the forward and
  // loss.backward() (Megatron-Core's example loops) instead of after optimizer.step(): the
  // previous step's gradients then live through the next forward.
  bool zero_grad_before_backward = false;
  bool bnb_quant_fp16 = false;
  bool quantize_head = false;
  bool separate_head = false;
  bool fused_qkv_lora = false;  // q/k/v adapters share one dropout of x (LitGPT LoRAQKVLinear)
  // The wrapper hands the model's outputs back in fp32 (Lightning Fabric's
  // _FabricModule.forward: precision.convert_output to the default dtype), so the loss runs on
  // fp32 copies of the logits.
  bool outputs_fp32 = false;
  // With --loss chunked: the model returns the whole head's logits in one call and the loss
  // splits them into 128-row chunks (LitGPT finetune/full.py: `model(input_ids)` without
  // lm_head_chunk_size, then utils.chunked_cross_entropy), not the head's 128-token chunks of
  // finetune/lora.py. The litgpt preset sets it for a full fine-tune.
  bool whole_head = false;
  // QLoRA loaded without a torch_dtype: transformers 4.33-4.36 from_pretrained forces fp16 for a
  // bitsandbytes load ("Overriding torch_dtype=None with torch_dtype=torch.float16"), so what it
  // does not quantize (embedding, lm_head, norms) is fp16, while a bf16 run computes under
  // autocast(bfloat16), which casts the frozen fp16 lm_head at every call (ms-swift 1.x's Qwen
  // loader passed torch_dtype=None; docs/estimator.md "Validation on memory-measured-2.csv").
  bool qlora_kept_fp16 = false;
  // LoRA on the lm_head too (LitGPT `lora_head: true`, litgpt/lora.py GPT: the head is a
  // LoRALinear with r = lora_r; PEFT target "lm_head"): r·(h + V) more adapter parameters, the
  // head's dropout copy of its input kept, and per call two more logits-sized temporaries.
  bool lora_head = false;
  // The run is under torch.compile (torchtune `compile: True`, which compiles each layer and the
  // loss's per-chunk cross-entropy; transformers TrainingArguments `torch_compile=True`, the
  // whole model): a cross-entropy computed inside compiled code keeps the model-dtype logits and
  // per-row statistics instead of fp32 copies (plan/autograd_sim_loss.cpp). The layers' saved
  // sets stay the eager programs', an upper bound on what inductor's partitioner keeps.
  bool compiled = false;
  // With --grad-ckpt offload, whose offloading runs:
  // - unsloth: each checkpointed layer input above 2 MiB is copied to a pinned host buffer as
  //   the forward reaches it (every layer at the first step, all but the last from the second:
  //   LAST_GC_INDEX) and comes back in backward into one of two persistent device buffers
  //   (GPU_BUFFERS, GPU_BUFFERS_B, grown to the largest input);
  // - torchtune: OffloadActivations (training/_activation_offloading.py) moves every saved
  //   activation of at least 1 KiB from the first step on, keeping the five latest on the
  //   device (max_fwd_stash_size) until newer ones are packed; the backward brings each back
  //   into a new tensor, freed when the next node unpacks.
  OffloadKind offload_kind = OffloadKind::unsloth;
  // A full fine-tune whose optimizer steps each parameter inside the backward (torchtune
  // `optimizer_in_bwd: True`, its single-device full recipes' default: training/memory.py
  // register_optim_in_bwd_hooks, one optimizer per parameter stepped and zeroed by a
  // post-accumulate-grad hook): no full set of gradients ever exists and there is no step phase.
  bool optimizer_in_backward = false;
  // Every micro-batch holds `seq` tokens (packing, or padding to the maximum); false: lengths
  // vary up to `seq` (unpacked data), which the caching allocator's reserve answers with a range.
  bool packed = true;
  // PYTORCH_CUDA_ALLOC_CONF expandable_segments:True (one growing segment per pool).
  bool expandable_segments = false;
  std::uint64_t cublas_workspace_bytes = kCublasWorkspaceHopperBytes;  // per (handle, stream)
  HostSide host;
  // What cudaMalloc can draw on for this process in all (docs/estimator.md "The device's
  // capacity"); 0: unknown, the allocator's replay is not capped. A discrete GPU's memory as CUDA
  // reports it (--device-total, else the card's free memory), or on a unified machine what the
  // kernel can give (MemAvailable, or a lower cgroup headroom). The estimator takes what sits
  // beside the allocator off it (the CUDA context, NCCL's buffers; where `reach_unified`, the
  // host side, paged states and pinned buffers too): the rest is the allocator's capacity.
  std::uint64_t device_reach_bytes = 0;
  bool reach_unified = false;
  // >= 0: take the allocator reserve as this fraction of allocated instead of replaying it. Only
  // the advice ladder's bisection probes set it (from one replay of the run they start from);
  // every figure the plan prints comes from its own replay.
  double reserve_fraction_hint = -1;
};

// Rejects zero batch/seq/nodes/rank and contradictory combinations (kbit-prep without qlora, a
// target list naming no linear map of the model, ...). The Error names the flag.
Status validate_run(const RunConfig& run, const ModelShape& shape);

// The constants the estimator uses, in one place so docs/estimator.md and tests can name them.
struct EstimatorConstants {
  double nf4_bytes_per_param = 0.5625;     // bitsandbytes NF4, block 64, fp32 absmax
  double nf4_dq_bytes_per_param = 0.5159;  // with double quantization
  // The CUDA context (driver state and the kernels loaded into it), measured, outside torch's
  // allocator: torch 1.13 with every kernel module loaded 666,632,192 B (pytorch PR #86509, the
  // CUDA_MODULE_LOADING=DEFAULT figure: what a training step's many kernels approach); the bare
  // lazily-loaded context 426 MiB (torch 2.10, CUDA 13; unsloth-zoo PR #1053); docs/domain.md's
  // 1.5 GB for context plus library state the upper end.
  std::uint64_t cuda_context_bytes = 666632192;
  std::uint64_t cuda_context_low_bytes = 426ULL * 1024 * 1024;
  std::uint64_t cuda_context_high_bytes = 1500000000;
  std::uint64_t assumed_shard_bytes = 5ULL * 1000 * 1000 * 1000;  // save_pretrained default
  // NCCL's own device buffers, cudaMalloc'd by the communicator outside torch's allocator: per
  // channel, one connection's buffer for each protocol (src/init.cc computeBuffSizes:
  // DEFAULT_LL_BUFFSIZE = NCCL_LL_LINES_PER_THREAD 8 x NCCL_LL_MAX_NTHREADS 512 x NCCL_STEPS 8 x
  // 16 B = 512 KiB; DEFAULT_LL128_BUFFSIZE = NCCL_LL128_ELEMS_PER_THREAD 120 x
  // NCCL_LL128_MAX_NTHREADS 640 x 8 x 8 B = 4,915,200 B; DEFAULT_BUFFSIZE 1 << 22 = 4 MiB for
  // Simple). FSDP's all-gather/reduce-scatter and DDP's all-reduce run the ring: each rank
  // receives from one peer per channel. The channel count is NCCL's topology search's (not an
  // input): the point takes 32 (MAXCHANNELS in src/include/device.h before later releases raised
  // it to 64), the range runs from 2 channels to 64.
  std::uint64_t nccl_connection_bytes = 524288 + 4915200 + (1ULL << 22);
  std::uint64_t nccl_channels = 32;
  std::uint64_t nccl_channels_low = 2;
  std::uint64_t nccl_channels_high = 64;
};
const EstimatorConstants& estimator_constants();

struct Terms {
  std::uint64_t weights = 0;  // base model weights in their training dtype
  std::uint64_t adapter = 0;  // LoRA A/B weights
  std::uint64_t gradients = 0;
  std::uint64_t optimizer = 0;
  std::uint64_t master = 0;       // fp32 master copy (mixed precision)
  std::uint64_t activations = 0;  // saved for backward at the end of the forward (autograd_sim)
  std::uint64_t logits = 0;       // what the loss path keeps until backward
  std::uint64_t transient = 0;    // the peak phase's working set above the terms it holds
  std::uint64_t workspaces = 0;   // cuBLAS/cuBLASLt workspaces (through torch's allocator)
  std::uint64_t allocator_reserve = 0;  // reserved above allocated (caching allocator replay)
  std::uint64_t cuda_context = 0;       // driver context and loaded kernels (outside torch)
  std::uint64_t nccl_buffers = 0;       // the communicator's buffers (several ranks; outside torch)
  // The host side on the same pool (HostSide): the process, a dataset in RAM, dataloader workers.
  std::uint64_t host_process = 0;
  std::uint64_t dataset = 0;
  std::uint64_t dataloader_workers = 0;
  // The checkpoint's file pages still cached after loading: reclaimable (drop_caches), so not in
  // the training peak, but the verdict counts them against what is free without a flush.
  std::uint64_t page_cache = 0;
};

// The term names in display order with their values, for tables and JSON.
std::vector<std::pair<std::string_view, std::uint64_t>> term_list(const Terms& t);

// What a term rests on: "derived" (a mechanism with a cited source), "measured" (a published
// measurement, docs/estimator.md names it; the config key that overrides it follows), or
// "assumed" (no measurement: the config key to set). For the worksheet and --json.
std::string_view term_basis(std::string_view term);

struct Estimate {
  std::uint64_t params = 0;
  std::uint64_t trainable_params = 0;
  Terms terms;
  std::uint64_t train_peak_allocated_bytes = 0;  // what torch.cuda.max_memory_allocated shows
  std::uint64_t train_peak_reserved_bytes = 0;   // torch.cuda.max_memory_reserved: + reserve
  // The reserve's range: low = every micro-batch at --seq; high = lengths varying up to --seq
  // (unpacked data): eight shapes in rising order, which is also the point then. Equal when
  // packed.
  std::uint64_t reserved_low_bytes = 0;
  std::uint64_t reserved_high_bytes = 0;
  // reserved + paged + context + NCCL buffers: what nvidia-smi shows for the process on a
  // discrete GPU.
  std::uint64_t train_peak_device_bytes = 0;
  // Its range: the context's measured range, NCCL's channel count and the reserve's range.
  std::uint64_t train_peak_device_low_bytes = 0;
  std::uint64_t train_peak_device_high_bytes = 0;
  // reserved + paged + context + NCCL buffers + host side: what the pool loses at the training
  // peak.
  std::uint64_t train_peak_pool_bytes = 0;
  // Its range: the context's measured range and the reserve's range (both ends).
  std::uint64_t train_peak_pool_low_bytes = 0;
  std::uint64_t train_peak_pool_high_bytes = 0;
  std::uint64_t expandable_reserve_bytes = 0;  // the reserve under expandable_segments:True
  // What the caching allocator can take: RunConfig::device_reach_bytes less what sits beside the
  // allocator on it; 0 when the reach is unknown (nothing capped). Reserved figures stop there:
  // a cudaMalloc beyond it fails, the allocator releases its cached segments and retries
  // (c10/cuda/CUDACachingAllocator.cpp malloc: release_cached_blocks, then alloc_block).
  std::uint64_t allocator_capacity_bytes = 0;
  // How often the replay the point comes from released the cache to stay within the capacity
  // (torch.cuda.memory_stats()["num_alloc_retries"] over the replayed steps): 0 = never.
  std::uint64_t alloc_retries = 0;
  // The allocated peak, or the requests after a release, do not fit in the capacity: torch
  // raises OutOfMemoryError, whatever the budget. The reserved figures are then left uncapped.
  bool out_of_memory = false;
  // Optimizer states bitsandbytes pages (cudaMallocManaged, tensors >= 1e5 elements): in the pool,
  // never in torch's allocator statistics.
  std::uint64_t paged_bytes = 0;
  // Checkpointed layer inputs copied to pinned host buffers (offloaded checkpointing): outside
  // torch's device statistics, in the pool on a unified machine.
  std::uint64_t pinned_host_bytes = 0;
  std::uint64_t ranks = 1;                 // data-parallel ranks the static terms are split across
  std::uint64_t load_peak_pool_bytes = 0;  // mmap'd shard + device copy (+ bf16 shard, QLoRA)
  std::uint64_t largest_shard_bytes = 0;
  std::uint64_t peak_pool_bytes() const;  // max(train, load)
};

// Pure. `largest_shard_bytes`: from the model directory when known, else the assumed default.
Estimate estimate(const ModelShape& shape, const RunConfig& run,
                  std::optional<std::uint64_t> largest_shard_bytes = std::nullopt);

// LoRA parameters r·(d_in + d_out) summed over the targeted linear maps of every layer.
std::uint64_t lora_params(const Architecture& a, const RunConfig& run);

// Whether the run's LoRA targets include this linear map (short names such as "q" accepted).
bool is_lora_target(const LinearMap& m, const RunConfig& run);

struct SimRun;
// The run as the activation model (autograd_sim) sees it.
SimRun sim_run_for(const Architecture& a, const RunConfig& run);

// --grad-ckpt offload moves the layer inputs off the device (RunConfig::offload_kind): always
// under torchtune, under Unsloth when one is above 2 MiB.
bool offloads_layer_inputs(const Architecture& a, const RunConfig& run);

}  // namespace sparkops::plan
