#pragma once
// What autograd keeps for one training step of a decoder-only model, computed by running the
// family's layer program (data/families.json: the operator sequence of its Hugging Face modeling
// code, or of Megatron-Core's TE layer under NeMo) through PyTorch's save rules (which inputs each
// operator's backward needs, given which of them require grad), then walking it backward for the
// transient peak. docs/estimator.md "Activations, by mechanism" lists every rule and its source;
// tools/memtrace measures the same step on the real engine and tests/plan/memtrace_agreement checks
// the two agree.
//
// Pure; all sizes in bytes; no allocation rounding (caching_allocator.hpp models that).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "models/model_shape.hpp"

namespace sparkops::plan {

// flash-attn 2 | HF sdpa (repeat_kv) | eager | torch SDPA's math fallback
enum class AttnKernel { flash, sdpa, eager, math, xformers };
// HF upcast CE (transformers >= 4.49) | the same with the shifted copy of transformers <= 4.45 and
// that era's remote code | the shifted copy beside the caller's model-dtype logits (4.46-4.48) |
// LitGPT chunked | fused linear-CE (Liger) | Unsloth's fused CE (one compiled chunk) | TRL
// chunked_nll (checkpointed fp32 chunks) | torchtune chunked_output (the head per sequence chunk,
// each chunk upcast and CE'd in turn) | Megatron-Core vocab-parallel CE (softmax in place on one
// fp32 copy)
enum class LossPath {
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
enum class TrainMethod { full, lora, qlora };
enum class Checkpointing { none, per_layer };

struct SimRun {
  TrainMethod method = TrainMethod::lora;
  std::uint64_t batch = 1;
  std::uint64_t seq = 2048;
  unsigned model_bytes = 2;    // bf16/fp16 2, fp32 4
  unsigned adapter_bytes = 4;  // PEFT fp32 adapters (4) or the model dtype
  std::uint64_t lora_rank = 16;
  double lora_dropout = 0.0;         // > 0: PEFT nn.Dropout (a bool mask and a copy per adapter)
  std::vector<std::string> targets;  // module names; empty with all_linear = every linear
  bool all_linear = true;
  AttnKernel attn = AttnKernel::sdpa;
  LossPath loss = LossPath::hf;
  Checkpointing ckpt = Checkpointing::per_layer;
  // bitsandbytes <= 0.43.1 MatMul4Bit keeps its input as `ctx.tensors = (A, B)`: a plain ctx
  // attribute, which autograd's release_variables() never frees, so A lives until the graph is
  // dropped (through the whole backward), not until this linear's backward ran.
  bool bnb_saves_input = false;
  bool dropout_off = false;  // model dropouts (GPT-2's 0.1) disabled
  // The training loop still holds the previous step's graph while the next forward runs (LitGPT
  // finetune/*.py: `logits`, whose grad_fns reach every node, is rebound when the forward returns;
  // `loss` is a float after backward): its ctx-held bnb inputs and its logits are live through
  // the next forward up to the head, gone at its loss.
  bool prev_graph_held = false;
  // The model's outputs come back as fp32 copies (Lightning Fabric's convert_output): the chunked
  // loss then runs, keeps and holds its logits in fp32.
  bool outputs_fp32 = false;
  // The chunked loss receives the whole head's logits (one head call; RunConfig::whole_head).
  bool whole_head = false;
  // Full-size dequantized copies of a 4-bit weight alive at once: 1 when the quantization state's
  // dtype is the compute dtype, 2 when dequantize_4bit's output (quant_state.dtype) is then cast
  // with .to(A.dtype) (Lightning Fabric quantizes from fp16 and computes in bf16).
  unsigned dequant_copies = 1;
  bool fused_qkv_lora = false;  // q/k/v adapters share one dropout of x (LitGPT LoRAQKVLinear)
  // The share of each parameter gradient that stays on this rank once its layer's backward ran
  // (1/N under FSDP/ZeRO reduce-scatter, 1 on one GPU or when accumulating under no_sync).
  double grad_share = 1.0;
  bool head_4bit =
      false;  // lm_head is a bitsandbytes 4-bit linear too (Fabric replaces every Linear)
  // An fp32 base computed under torch.autocast (LoRA, --precision mixed, no sharding wrapper that
  // casts the weights itself). autocast_mode.cpp cached_cast caches the half-precision copy only
  // of an fp32 leaf that requires grad, so a frozen linear casts its weight again at every call;
  // where the call's input requires grad, the matmul's backward keeps that copy (2 B per weight
  // element) until it runs. The lm_head likewise, once per call (per chunk when chunked). With
  // QLoRA (an fp16 unquantized head under bf16 autocast) only the head's copies.
  bool autocast_base_copies = false;
  // LoRA on the lm_head (RunConfig::lora_head).
  bool lora_head = false;
  // Every parameter's .grad already exists when this backward starts (an accumulation
  // micro-batch after the first: zero_grad runs only after the optimizer step), so AccumulateGrad
  // adds each new gradient into it in place: the walk's parameter gradients are temporaries, not
  // a growing set (the caller counts the accumulated ones with the fixed terms).
  bool grads_accumulated = false;
  // Megatron-Core's own decoder layer (NeMo 2: the TransformerEngine layer spec) in place of the
  // Hugging Face one, for the models program_for maps (Llama, Mistral, Qwen2) when nothing is
  // recomputed and the base is not 4-bit; every other run keeps the HF program.
  bool megatron_layer = false;
  // Unsloth's own decoder layer (unsloth/models/llama.py LlamaDecoderLayer_fast_forward with
  // kernels/fast_lora.py's LoRA_QKV, LoRA_W and LoRA_MLP where patch_peft_model fuses a group,
  // its Triton RMSNorm and RoPE) in place of the Hugging Face one, for the models program_for
  // maps (Llama, Mistral, Qwen2, Qwen3) under LoRA/QLoRA; every other run keeps the HF program.
  bool unsloth_layer = false;
  // TRL's chunked NLL loss: rows per chunk (trl sft_trainer.py _CHUNKED_LM_HEAD_CHUNK_SIZE; a
  // module constant, changed only by patching it).
  std::uint64_t nll_chunk = 256;
  // The run is under torch.compile (RunConfig::compiled): a cross-entropy computed inside the
  // compiled code (the HF model's own loss, torchtune's compiled chunks) saves what inductor's
  // partitioner keeps (autograd_sim_loss.cpp). The layers stay eager programs: an upper bound.
  bool compiled = false;
  // Under offloaded checkpointing (RunConfig::offload_kind), how many layer inputs' worth the
  // device still holds through the loss and backward, and inside the forward; 0: not offloaded
  // (every layer's input stays). torchtune: the one brought back beside the previous node's
  // (2), the stash's five in forward (none is left at the loss: the final norm's saved tensors
  // have pushed them out; counted as two, a bound). Unsloth: its two persistent device buffers
  // and the last layer's input (3).
  unsigned inputs_kept = 0;
  unsigned inputs_kept_forward = 0;
  // The optimizer steps each parameter as its gradient is accumulated (torchtune
  // optimizer_in_bwd: training/memory.py register_optim_in_bwd_hooks, a post-accumulate-grad hook
  // that runs step() then zero_grad()): a parameter gradient lives only from the node that makes
  // it to its hook, except a tied head's, which waits in the engine's input buffer for the
  // embedding's before it is accumulated.
  bool grads_stepped = false;
};

// Every field of `run`, as text: a memo keyed on it (plan/reserve_model.cpp) can never serve a
// run that differs in any field. A field added to SimRun is added here too.
std::string sim_run_key(const SimRun& run);

struct SimResult {
  double activations = 0;  // live after the decoder stack and final norm (the saved set + output)
  double loss = 0;         // what the loss path adds on top until backward starts
  double head_copy = 0;    // of `loss`: a weight-sized copy the head keeps (Baichuan NormHead)
  double forward_peak_extra = 0;   // transient above static+inputs+activations during forward
  double backward_peak_extra = 0;  // above static+inputs during backward (saved, grads, working)
  double inputs = 0;               // input_ids + labels, int64
  double leaf_grad = 0;            // .grad of the embedding output made a leaf under checkpointing
  double prev_graph = 0;           // the previous step's graph still live at the forward peak
  bool family_known = false;
  std::string family;  // the families.json entry used
  // A middle layer's storages in creation (forward) order at this token count, for the caching
  // allocator replay (plan/step_replay.hpp): bytes, and whether backward keeps it (saved) or it
  // dies once the next operator has consumed it. The layer's input and output (hidden-sized) and
  // the shared cos/sin are not listed. `layer_backward_peak`: that layer's backward working set
  // above what was live before it (its inputs' gradients, parameter gradients, temporaries).
  struct LayerBlock {
    double bytes = 0;
    bool saved = false;
    // > 0 for a bitsandbytes 4-bit linear's output: its weight dequantized (bytes of one copy),
    // allocated just before the output in forward and again in backward (MatMul4Bit).
    double dequant = 0;
  };
  std::vector<LayerBlock> layer_blocks;
  double layer_backward_peak = 0;
  bool layer_saves_input = false;  // backward keeps the layer's input (LayerNorm, a trained linear)
  double rope = 0;                 // the shared cos and sin
  double final_saved = 0;          // what the final norm keeps
  double loss_forward_transient = 0;   // the loss forward's working set above `loss`
  double loss_backward_transient = 0;  // the loss backward's working set above `loss`
  // The loss's transients tensor by tensor, in the order its code allocates them, for the
  // allocator replay: each lives to the end of its phase, or dies once block `freed_after` (an
  // index into the same list) exists. Forward: taken before the saved set (`loss`), the ones
  // still alive dropped after it; backward: taken after the saved set, then dropped. A last block
  // carries what the head's copies, dequantized weight or LoRA add to the phase's *_transient
  // figure. Empty: the replay takes each *_transient as one block after the saved set (a path
  // not yet listed).
  struct LossBlock {
    double bytes = 0;
    int freed_after = -1;
  };
  std::vector<LossBlock> loss_forward_blocks, loss_backward_blocks;
  // The backward block after which the saved set dies (autograd releases it once the node that
  // kept it has run); -1: after the last.
  int loss_saved_freed_after = -1;
};

// Errors: a families.json entry that does not parse (names the entry and the line).
Result<SimResult> simulate_step(const models::Architecture& arch, const SimRun& run);

// The run compiles its cross-entropy (SimRun::compiled on a loss computed inside the compiled
// code: the HF model's own, torchtune's chunked output), whose saved set is then inductor's
// (plan/autograd_sim_loss.cpp).
bool compiles_loss(const SimRun& run);

// The family entry for a config model_type, following aliases; "llama" when unknown (noted).
std::string_view family_for(std::string_view model_type, bool* known);

// The layer program a run executes for model_type: family_for's, or with run.megatron_layer
// Megatron-Core's (megatron_gpt*) for llama, mistral and qwen2 without recompute or a 4-bit base.
std::string_view program_for(std::string_view model_type, const SimRun& run, bool* known);

}  // namespace sparkops::plan

namespace sparkops::plan {

// Parameter bytes of the model as its family's modules build it (norms, biases, embeddings,
// learned positions), in the run's dtypes; QLoRA linears as bitsandbytes stores NF4: packed
// ceil(n/2) bytes plus block-64 absmax (fp32, or with double quantization uint8 plus one fp32
// per 256 blocks).
struct ParamBytes {
  double base = 0;       // every non-adapter parameter
  double adapter = 0;    // LoRA A and B
  double trainable = 0;  // what gets gradients and optimizer states
  double base_params = 0;
};
Result<ParamBytes> param_bytes(const models::Architecture& arch, const SimRun& run,
                               bool double_quant, std::uint64_t positions);

// Unsloth's persistent device buffers under its own layer (SimRun::unsloth_layer), allocated by
// the first forward and kept: kernels/utils.py fast_dequantize's global WEIGHT_BUFFERS and
// ABSMAX_BUFFERS (a 4-bit base: one model-dtype weight and its fp32 absmax, n / 64 elements,
// grown with resize_ to the largest weight a fused Function dequantizes), and models/llama.py
// LlamaRotaryEmbedding's cos/sin cache (model dtype, head_dim wide: min(max_position_embeddings,
// 32768) rows, grown to a multiple of 8192 when max_position_embeddings or the sequence needs
// more; `positions` is max_position_embeddings, 0 when not stated: the run's sequence). 0 for
// every other run.
double unsloth_buffer_bytes(const models::Architecture& arch, const SimRun& run,
                            std::uint64_t positions);

// The projection groups Unsloth's patch_peft_model fuses into one Function under `run` ("QKV",
// "O", "MLP", in that order); empty when the run does not execute Unsloth's layer.
std::vector<std::string> unsloth_fused_groups(const models::Architecture& arch, const SimRun& run);

}  // namespace sparkops::plan
