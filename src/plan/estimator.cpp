#include "plan/estimator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "base/checked_cast.hpp"
#include "plan/autograd_sim.hpp"
#include "plan/device_capacity.hpp"
#include "plan/reserve_model.hpp"
#include "plan/sharding.hpp"

namespace sparkops::plan {

namespace {

// Saturating: a size beyond 2^64 (a 10^18-token batch) reads as the largest size, never wraps.
std::uint64_t to_bytes(double v) {
  if (!(v > 0)) return 0;
  if (v >= 18446744073709549568.0) return std::numeric_limits<std::uint64_t>::max();
  return static_cast<std::uint64_t>(v + 0.5);
}
double d(std::uint64_t v) {
  return static_cast<double>(v);
}

bool targeted(const LinearMap& m, const RunConfig& run) {
  switch (run.lora_targets) {
    case LoraTargets::all_linear:
      return true;
    case LoraTargets::attn:
      return m.attention;
    case LoraTargets::list:
      return std::find(run.lora_target_names.begin(), run.lora_target_names.end(), m.name) !=
             run.lora_target_names.end();
  }
  return false;
}

// Short names people use for target lists ("q", "v", "gate") map to the module names.
std::string_view canonical_target(std::string_view t) {
  if (t == "q") return "q_proj";
  if (t == "k") return "k_proj";
  if (t == "v") return "v_proj";
  if (t == "o") return "o_proj";
  if (t == "gate") return "gate_proj";
  if (t == "up") return "up_proj";
  if (t == "down") return "down_proj";
  return t;
}

}  // namespace

const EstimatorConstants& estimator_constants() {
  static const EstimatorConstants constants;
  return constants;
}

bool is_lora_target(const LinearMap& m, const RunConfig& run) {
  RunConfig canon = run;
  for (auto& t : canon.lora_target_names) t = std::string(canonical_target(t));
  return targeted(m, canon);
}

std::uint64_t lora_params(const Architecture& a, const RunConfig& run) {
  std::uint64_t per_layer = 0;
  for (const auto& m : layer_linears(a)) {
    RunConfig canon = run;
    for (auto& t : canon.lora_target_names) t = std::string(canonical_target(t));
    if (targeted(m, canon)) per_layer += run.lora_rank * (m.d_in + m.d_out) * m.copies;
  }
  const std::uint64_t head = run.lora_head ? run.lora_rank * (a.hidden + a.vocab) : 0;
  return a.layers * per_layer + head;
}

Status validate_run(const RunConfig& run, const ModelShape& shape) {
  if (run.batch == 0) return fail(Errc::invalid_argument, "--batch: must be > 0");
  if (run.seq == 0) return fail(Errc::invalid_argument, "--seq: must be > 0");
  if (run.nodes == 0) return fail(Errc::invalid_argument, "--nodes: must be > 0");
  if (run.gpus == 0) return fail(Errc::invalid_argument, "--gpus: must be > 0");
  if (run.grad_accum == 0) return fail(Errc::invalid_argument, "--grad-accum: must be > 0");
  if (run.method != Method::full && run.lora_rank == 0) {
    return fail(Errc::invalid_argument, "--lora-rank: must be > 0");
  }
  if (run.kbit_prep == KbitPrep::on && run.method != Method::qlora) {
    return fail(Errc::invalid_argument, "--kbit-prep: only meaningful with --method qlora");
  }
  if (run.method == Method::qlora && run.precision == Precision::fp32) {
    return fail(Errc::invalid_argument, "--precision fp32: QLoRA computes in bf16/fp16");
  }
  if (run.method != Method::full && lora_params(shape.arch, run) == 0) {
    return fail(Errc::invalid_argument, "--lora-targets: names no linear layer of this model");
  }
  return {};
}

std::vector<std::pair<std::string_view, std::uint64_t>> term_list(const Terms& t) {
  return {{"weights", t.weights},
          {"adapter", t.adapter},
          {"gradients", t.gradients},
          {"optimizer", t.optimizer},
          {"master", t.master},
          {"activations", t.activations},
          {"logits", t.logits},
          {"transient", t.transient},
          {"workspaces", t.workspaces},
          {"allocator_reserve", t.allocator_reserve},
          {"cuda_context", t.cuda_context},
          {"nccl_buffers", t.nccl_buffers},
          {"host_process", t.host_process},
          {"dataset", t.dataset},
          {"dataloader_workers", t.dataloader_workers},
          {"page_cache", t.page_cache}};
}

std::string_view term_basis(std::string_view term) {
  if (term == "cuda_context") return "measured";
  if (term == "host_process") return "measured, plan.host_process";
  if (term == "dataset") return "assumed, plan.dataset";
  if (term == "dataloader_workers") return "measured, plan.dataloader_workers";
  if (term == "page_cache") return "measured, plan.page_cache";
  return "derived";
}

std::uint64_t Estimate::peak_pool_bytes() const {
  return std::max(train_peak_pool_bytes, load_peak_pool_bytes);
}

namespace {

// Adafactor keeps one row and one column factor (fp32) per matrix and a full state per vector.
double adafactor_elements(const ModelShape& s, const RunConfig& run) {
  const Architecture& a = s.arch;
  double n = 0;
  for (const auto& m : layer_linears(a)) {
    if (run.method == Method::full) {
      n += d(m.copies) * d(m.d_in + m.d_out);
    } else if (targeted(m, run)) {
      n += d(m.copies) * d(m.d_in + m.d_out + 2 * run.lora_rank);
    }
  }
  n *= d(a.layers);
  if (run.method == Method::full) {
    n += d(a.vocab + a.hidden) * (a.tied_embeddings ? 1.0 : 2.0) + d(s.params.other);
  }
  return n;
}

}  // namespace

bool offloads_layer_inputs(const Architecture& a, const RunConfig& run) {
  if (run.grad_ckpt != GradCkpt::offload) return false;
  if (run.offload_kind == OffloadKind::torchtune) return true;
  // unsloth 2026.8.19 models/_utils.py apply_unsloth_gradient_checkpointing: below a
  // max_seq_length of 512 "unsloth" becomes plain checkpointing; unsloth_zoo MINIMUM_SIZE: an
  // input of at most 2 MiB stays on the device.
  const double bytes = run.precision == Precision::fp32 ? 4.0 : 2.0;
  return run.seq >= 512 && d(run.batch) * d(run.seq) * d(a.hidden) * bytes > 2.0 * 1024 * 1024;
}

// The run as the autograd simulation sees it.
SimRun sim_run_for(const Architecture& a, const RunConfig& run) {
  SimRun r;
  r.method = run.method == Method::full   ? TrainMethod::full
             : run.method == Method::lora ? TrainMethod::lora
                                          : TrainMethod::qlora;
  r.batch = run.batch;
  r.seq = run.seq;
  r.model_bytes = run.precision == Precision::fp32 ? 4 : 2;
  r.adapter_bytes = run.adapter_fp32 ? 4 : r.model_bytes;
  r.lora_rank = run.lora_rank;
  r.lora_dropout = run.lora_dropout;
  r.all_linear = run.lora_targets == LoraTargets::all_linear;
  if (run.lora_targets == LoraTargets::attn) {
    r.targets = {"q_proj",   "k_proj",          "v_proj", "o_proj",
                 "qkv_proj", "query_key_value", "c_attn", "dense"};
  } else {
    for (const auto& t : run.lora_target_names) r.targets.emplace_back(canonical_target(t));
  }
  const bool eager = run.attn == Attn::eager || (a.needs_eager_attention && run.attn == Attn::sdpa);
  r.attn = eager                        ? AttnKernel::eager
           : run.attn == Attn::flash    ? AttnKernel::flash
           : run.attn == Attn::math     ? AttnKernel::math
           : run.attn == Attn::xformers ? AttnKernel::xformers
                                        : AttnKernel::sdpa;
  r.loss = run.loss == LossKind::hf_shifted        ? LossPath::hf_shifted
           : run.loss == LossKind::hf_shifted_kept ? LossPath::hf_shifted_kept
           : run.loss == LossKind::chunked         ? LossPath::chunked
           : run.loss == LossKind::fused           ? LossPath::fused
           : run.loss == LossKind::fused_unsloth   ? LossPath::fused_unsloth
           : run.loss == LossKind::chunked_nll     ? LossPath::chunked_nll
           : run.loss == LossKind::chunked_output  ? LossPath::chunked_output
           : run.loss == LossKind::megatron        ? LossPath::megatron
                                                   : LossPath::hf;
  // Unsloth returns plain logits (the HF loss) for batches of at most 1024 tokens.
  if ((run.loss == LossKind::fused || run.loss == LossKind::fused_unsloth) &&
      run.fused_loss_above_tokens > 0 &&
      d(run.batch) * d(run.seq) <= d(run.fused_loss_above_tokens))
    r.loss = LossPath::hf;
  r.ckpt = run.grad_ckpt == GradCkpt::none ? Checkpointing::none : Checkpointing::per_layer;
  r.bnb_saves_input = run.bnb_saves_input;
  r.prev_graph_held = run.loop_holds_graph;
  r.outputs_fp32 = run.outputs_fp32;
  r.whole_head = run.whole_head && run.loss == LossKind::chunked;
  r.dequant_copies = run.bnb_quant_fp16 && run.precision != Precision::fp16 ? 2 : 1;
  r.head_4bit = run.quantize_head;
  r.fused_qkv_lora = run.fused_qkv_lora;
  r.lora_head = run.lora_head && run.method != Method::full;
  r.compiled = run.compiled;
  if (run.grad_ckpt == GradCkpt::offload) {
    if (run.offload_kind == OffloadKind::torchtune) {
      r.inputs_kept = 2;
      r.inputs_kept_forward = 5;
    } else if (offloads_layer_inputs(a, run)) {
      r.inputs_kept = 3;
      r.inputs_kept_forward = 3;
    }
  }
  r.grads_stepped = run.optimizer_in_backward && run.method == Method::full;
  // NeMo 2 trains Megatron-Core's GPTModel (TransformerEngine layer spec), not the HF modules.
  r.megatron_layer = run.framework == Framework::nemo;
  // Unsloth's LoRA/QLoRA models run its own decoder layer (program_for picks the families).
  r.unsloth_layer = run.framework == Framework::unsloth;
  // LoRA on an fp32 base computed under autocast: one process, or DDP (each rank the whole
  // model). FSDP's MixedPrecision gathers bf16 units and DeepSpeed casts the module: no autocast
  // copies there.
  const std::uint64_t ranks =
      std::max<std::uint64_t>(run.nodes, 1) * std::max<std::uint64_t>(run.gpus, 1);
  r.autocast_base_copies = run.method == Method::lora && run.precision == Precision::mixed &&
                           (ranks == 1 || run.shard == ShardMode::ddp);
  // QLoRA with the unquantized modules in fp16 under bf16 autocast: the 16-bit lm_head is cast
  // per call like an fp32 base's (the 4-bit linears dequantize themselves).
  if (run.method == Method::qlora && run.qlora_kept_fp16 && run.precision == Precision::bf16 &&
      !run.quantize_head)
    r.autocast_base_copies = true;
  return r;
}

Estimate estimate(const ModelShape& s, const RunConfig& run, std::optional<std::uint64_t> shard) {
  const auto& k = estimator_constants();
  const ParamCounts& p = s.params;
  const Architecture& a = s.arch;
  const std::uint64_t ranks =
      std::max<std::uint64_t>(run.nodes, 1) * std::max<std::uint64_t>(run.gpus, 1);
  // DeepSpeed's bf16/fp16 engines cast the module to the half dtype and keep fp32 master
  // partitions and fp32 optimizer states (runtime/zero/stage_1_and_2.py
  // single_partition_of_fp32_groups, stage3.py fp32_partitioned_groups_flat).
  const bool deepspeed =
      ranks > 1 && (run.shard == ShardMode::zero2 || run.shard == ShardMode::zero3);
  const double total = d(p.total);
  const bool peft = run.method != Method::full;
  // LoRA under mixed precision keeps the base as loaded, in fp32 (PEFT's examples/sft load with
  // torch_dtype=float32 unless quantized), and computes in bf16: under FSDP its
  // MixedPrecision(param_dtype=bf16) gathers each unit in bf16 (Accelerate's
  // FullyShardedDataParallelPlugin.set_mixed_precision); DeepSpeed's bf16 engine casts the module
  // to bf16 itself.
  const bool fp32_stored_base =
      peft && run.method == Method::lora && run.precision == Precision::mixed && !deepspeed;
  const double dense_bytes = run.precision == Precision::fp32 || fp32_stored_base ? 4.0 : 2.0;

  Estimate e;
  e.params = p.total;
  e.ranks = ranks;
  Terms& t = e.terms;
  double weights = 0;
  // A pre-quantized base trained frozen holds its stored bytes (models/quantization.hpp); one the
  // stack dequantizes (MXFP4, fp8) trains as 16-bit weights like an unquantized model.
  const bool stored_quantized =
      s.quant && s.quant->training == models::QuantTraining::frozen_quantized && peft;
  if (stored_quantized) {
    weights = d(s.quant->weight_bytes);
  } else if (run.method == Method::qlora) {
    const double nf4 =
        run.double_quant == DoubleQuant::on ? k.nf4_dq_bytes_per_param : k.nf4_bytes_per_param;
    const double kept = run.kbit_prep == KbitPrep::on ? 4.0 : 2.0;
    const double head =
        d(p.lm_head) + (run.separate_head && p.lm_head == 0 ? d(a.vocab) * d(a.hidden) : 0.0);
    weights = d(p.linear) * nf4 + d(p.embedding + p.other) * kept +
              head * (run.quantize_head ? nf4 : kept);
  } else {
    weights = total * dense_bytes;
    // LitGPT converts a tied checkpoint into wte plus a copied lm_head
    // (scripts/convert_hf_checkpoint.py: lm_head.weight = transformer.wte.weight).
    if (run.separate_head && p.lm_head == 0) weights += d(a.vocab) * d(a.hidden) * dense_bytes;
  }
  // The root unit (embedding, lm_head, final norm) in the bytes it is stored in; the decoder
  // layers share the rest.
  const double head_copy = run.separate_head && p.lm_head == 0 ? d(a.vocab) * d(a.hidden) : 0.0;
  const double root_bytes_per = run.method == Method::qlora && !stored_quantized
                                    ? (run.kbit_prep == KbitPrep::on ? 4.0 : 2.0)
                                    : dense_bytes;
  const double root_weights =
      std::min(weights, (d(p.embedding + p.lm_head) + head_copy) * root_bytes_per);
  const double layers = d(std::max<std::uint64_t>(a.layers, 1));

  const double trainable = peft ? d(lora_params(a, run)) : total;
  e.trainable_params = saturating_round<std::uint64_t>(trainable);
  // PEFT keeps adapters in fp32; full fine-tuning trains the model's own dtype; DeepSpeed casts
  // the whole module, adapters included, to the half dtype.
  const double train_dtype = deepspeed && run.precision != Precision::fp32 ? dense_bytes
                             : peft ? (run.adapter_fp32 ? 4.0 : dense_bytes)
                                    : dense_bytes;
  const double adapter = peft ? trainable * train_dtype : 0.0;
  // Megatron's main_grad buffer is fp32 (grad_reduce_in_fp32); otherwise gradients take the
  // trainable parameters' dtype.
  const double gradients = trainable * (run.fp32_grads ? 4.0 : train_dtype);
  double optimizer = 0;
  // fp32 states whatever the parameter dtype: Megatron's and DeepSpeed's optimizers step fp32
  // main params.
  const bool fp32_states = run.fp32_optimizer_states || deepspeed;
  switch (run.optim) {
    case Optim::adamw:
      // torch AdamW keeps states in the parameter dtype: fp32 (8 B) or bf16/fp16 (4 B).
      optimizer =
          trainable *
          (train_dtype >= 4.0 || run.precision == Precision::mixed || fp32_states ? 8.0 : 4.0);
      break;
    case Optim::paged_adamw:
      // bitsandbytes 32-bit AdamW: state1/state2 fp32 (optim/optimizer.py get_state_buffer).
      optimizer = trainable * 8.0;
      break;
    case Optim::adamw8bit:
    case Optim::paged_adamw8bit:
      optimizer = trainable * 2.0;
      break;
    case Optim::adafactor:
      optimizer = adafactor_elements(s, run) * 4.0;
      break;
    case Optim::sgd:
      optimizer = 0;
      break;
  }
  double master = 0;
  if ((run.precision == Precision::mixed && !peft) || (fp32_states && train_dtype < 4.0))
    master = trainable * 4.0;

  // One rank's share (plan/sharding.cpp): what the framework's data-parallel wrapper shards,
  // gathers and buckets.
  ShardInput si;
  si.ranks = ranks;
  si.weights = weights;
  si.adapter = adapter;
  si.gradients = gradients;
  si.optimizer = optimizer;
  si.master = master;
  si.root_weights = root_weights;
  si.layer_weights = (weights - root_weights) / layers;
  double largest_linear = 0;
  for (const auto& m : layer_linears(a))
    largest_linear = std::max(largest_linear, d(m.d_in * m.d_out));
  si.largest_module = std::max(d(a.vocab) * d(a.hidden), largest_linear) * root_bytes_per;
  si.layer_grads = gradients / layers;
  si.trainable = trainable;
  si.grad_elem_bytes = run.fp32_grads ? 4.0 : train_dtype;
  si.hidden = d(a.hidden);
  si.no_sync = run.fsdp_no_sync && run.grad_accum > 1;
  si.gather_ratio = fp32_stored_base ? 0.5 : 1.0;
  const ShardTerms st = shard_terms(run.shard, si);
  t.weights = to_bytes(st.weights);
  t.adapter = to_bytes(st.adapter);
  t.gradients = to_bytes(st.gradients);
  t.optimizer = to_bytes(st.optimizer);
  t.master = to_bytes(st.master);
  // bitsandbytes pages the state of every tensor of >= 1e5 elements (optim/optimizer.py
  // get_state_buffer -> functional.get_paged: cudaMallocManaged): outside torch's allocator.
  double paged = 0;
  if (run.optim == Optim::paged_adamw || run.optim == Optim::paged_adamw8bit) {
    double paged_elems = 0;
    if (peft) {
      for (const auto& m : layer_linears(a)) {
        RunConfig canon = run;
        for (auto& tn : canon.lora_target_names) tn = std::string(canonical_target(tn));
        if (!targeted(m, canon)) continue;
        for (const double n : {d(run.lora_rank * m.d_in), d(run.lora_rank * m.d_out)})
          if (n >= 1e5) paged_elems += n * d(m.copies) * d(a.layers);
      }
    } else {
      paged_elems = total - d(p.other);  // every matrix; norms and biases stay unpaged
    }
    paged = trainable > 0 ? d(t.optimizer) * std::min(1.0, paged_elems / trainable) : 0;
  }
  e.paged_bytes = to_bytes(paged);
  // Offloaded checkpointing's pinned host buffers, each rounded up to a power of two by torch's
  // CachingHostAllocator (ATen/core/CachingHostAllocator.h), which keeps a freed block cached:
  // - Unsloth (unsloth_zoo 2026.8.13 gradient_checkpointing.py): 200 buffers of 128 Ki elements
  //   made at start-up (initialize_unsloth_gradient_checkpointing), then CPU_BUFFERS[i] grown
  //   (resize_) to the input of the i-th layer it offloads, every layer's at the first step;
  // - torchtune (OffloadActivations): torch.empty_like(pin_memory=True) per layer input.
  if (run.grad_ckpt == GradCkpt::offload && a.layers > 1) {
    const double layer_in =
        d(run.batch) * d(run.seq) * d(a.hidden) * (run.precision == Precision::fp32 ? 4.0 : 2.0);
    const double pinned = std::exp2(std::ceil(std::log2(layer_in)));
    if (run.offload_kind == OffloadKind::torchtune) {
      e.pinned_host_bytes = to_bytes(layers * pinned);
    } else {
      const double startup = 200.0 * 128 * 1024 * (run.precision == Precision::fp32 ? 4.0 : 2.0);
      e.pinned_host_bytes =
          to_bytes(startup + (offloads_layer_inputs(a, run) ? layers * pinned : 0.0));
    }
  }

  // Activations, loss and the backward working set from the family's operator sequence.
  SimRun sr = sim_run_for(a, run);
  // Gradients already reduce-scattered keep only this rank's share through the backward.
  sr.grad_share = gradients > 0 ? std::min(1.0, st.gradients / gradients) : 1.0;
  sr.grads_accumulated = run.grad_accum > 1;
  SimResult sim;
  if (auto r = simulate_step(a, sr)) sim = *r;
  t.activations = to_bytes(sim.activations);
  t.logits = to_bytes(sim.loss);
  const double fixed = d(t.weights) + d(t.adapter) + d(t.optimizer) - paged + d(t.master);
  // torch AdamW(fused=True) updates in one kernel per group: no temporary.
  // torch/optim/adamw.py _multi_tensor_adamw: one temporary the size of the local parameters.
  const double share = optimizer > 0 ? st.optimizer / optimizer : 1.0;
  const double optim_temp =
      run.optim == Optim::adamw && !run.fused_adamw ? trainable * train_dtype * share : 0;
  // Gradient accumulation (--grad-accum > 1): zero_grad(set_to_none=True) runs only after the
  // optimizer step (transformers Trainer: model.zero_grad() after optimizer.step(); LitGPT
  // fit(): optimizer.zero_grad() when not is_accumulating), so from the second micro-batch on
  // every .grad (this rank's share) lives through the forward and the backward, and autograd's
  // AccumulateGrad adds each new gradient into it in place (torch/csrc/autograd/functions/
  // accumulate_grad.h): the backward's own parameter gradients are then temporaries.
  const double accumulated = run.grad_accum > 1 ? d(t.gradients) : 0.0;
  // A loop that zeroes the gradients only just before backward carries the last step's into
  // the forward (RunConfig::zero_grad_before_backward).
  const double stale = run.zero_grad_before_backward ? d(t.gradients) : 0.0;
  const double forward = fixed + std::max(accumulated, stale) + sim.inputs + sim.forward_peak_extra;
  // Stepped in backward, a foreach AdamW's hook runs _multi_tensor_adamw on one parameter: its
  // sqrt temporary is that parameter's size, the largest an embedding or linear.
  const double optim_temp_in_backward =
      sr.grads_stepped && run.optim == Optim::adamw && !run.fused_adamw
          ? std::max(d(a.vocab) * d(a.hidden), largest_linear) * train_dtype * share
          : 0.0;
  const double backward = fixed + accumulated + sim.inputs + sim.backward_peak_extra +
                          st.reduce_transient + optim_temp_in_backward;
  // The optimizer step: what the wrapper leaves at it (FSDP: the local shards and the
  // reduce-scattered gradients, plan/sharding.cpp), and a loop that holds its `logits` keeps them
  // (and the graph they reach) through the step until the next forward returns (LitGPT fit(),
  // the hand-written `logits = model(x)` loops).
  // Stepped in backward (RunConfig::optimizer_in_backward), there is no step phase.
  const double step = sr.grads_stepped ? 0.0
                                       : fixed - d(t.weights) + st.step_weights +
                                             st.step_gradients + optim_temp + st.step_transient +
                                             (sr.prev_graph_held ? sim.prev_graph : 0.0);
  // Nor a set of gradients: each lives from its node to its hook (inside the backward's peak).
  if (sr.grads_stepped) t.gradients = 0;
  const double peak = std::max({forward, backward, step});
  const double held = fixed + d(t.activations) + d(t.logits);
  t.transient = to_bytes(peak - std::min(peak, held));
  // cuBLAS workspaces come from torch's caching allocator (CublasHandlePool.cpp getNewWorkspace):
  // max_memory_allocated counts them.
  // The allocator's capacity (plan/device_capacity.hpp): the reach less the context, NCCL's
  // buffers and, on a unified machine, the host side, paged and pinned memory.
  const std::uint64_t nccl_point = ranks > 1 ? k.nccl_connection_bytes * k.nccl_channels : 0;
  const std::uint64_t host =
      saturating_add(saturating_add(run.host.process_bytes, run.host.dataset_bytes),
                     to_bytes(d(run.host.dataloader_workers) * d(run.host.worker_bytes)));
  const std::uint64_t capacity = allocator_capacity(
      run, {k.cuda_context_bytes, nccl_point, host, e.paged_bytes, e.pinned_host_bytes});
  const bool capped = capacity != kNoCapacity;
  // The range's ends: the context's measured range and NCCL's channel range leave the allocator
  // more (high end) or less (low end).
  const std::uint64_t nccl_low = ranks > 1 ? k.nccl_connection_bytes * k.nccl_channels_low : 0;
  const std::uint64_t nccl_high = ranks > 1 ? k.nccl_connection_bytes * k.nccl_channels_high : 0;
  const std::uint64_t capacity_high = allocator_capacity(
      run, {k.cuda_context_low_bytes, nccl_low, host, e.paged_bytes, e.pinned_host_bytes});
  const std::uint64_t capacity_low = allocator_capacity(
      run, {k.cuda_context_high_bytes, nccl_high, host, e.paged_bytes, e.pinned_host_bytes});
  ReserveFigures reserve;
  if (run.reserve_fraction_hint >= 0) {
    reserve.workspaces = library_buffers(s.arch, run, sr).total();
    reserve.fixed = reserve.varying =
        to_bytes(run.reserve_fraction_hint * (peak + d(reserve.workspaces)));
  } else {
    reserve = replay_reserve(s, run, t, e.paged_bytes, sr.grad_share, capacity);
  }
  t.workspaces = reserve.workspaces;
  e.train_peak_allocated_bytes = saturating_add(to_bytes(peak), t.workspaces);
  // The capacity: a tensor that does not fit even after a cache release is an OutOfMemoryError.
  // The run then stops there; its figures are what it would need, the replay without a limit.
  if (capped) {
    e.allocator_capacity_bytes = capacity;
    e.out_of_memory = e.train_peak_allocated_bytes > capacity ||
                      reserve.fixed_replay.out_of_memory ||
                      (!run.packed && reserve.varying_replay.out_of_memory);
    if (e.out_of_memory && run.reserve_fraction_hint < 0)
      reserve = replay_reserve(s, run, t, e.paged_bytes, sr.grad_share);
  }
  // The caching allocator's reserve from its rules (plan/caching_allocator.hpp), replayed over
  // this run's tensors: what max_memory_reserved shows above max_memory_allocated.
  // Lengths that vary leave the cache holding segments for a chain of shapes (a long run of
  // shuffled lengths contains rising chains many times over): the point is the rising replay,
  // the fixed-length replay the range's low end.
  t.allocator_reserve = run.packed ? reserve.fixed : reserve.varying;
  e.train_peak_reserved_bytes = saturating_add(e.train_peak_allocated_bytes, t.allocator_reserve);
  e.reserved_low_bytes = saturating_add(e.train_peak_allocated_bytes, reserve.fixed);
  e.reserved_high_bytes = saturating_add(e.train_peak_allocated_bytes, reserve.varying);
  if (!run.packed && !run.expandable_segments && run.reserve_fraction_hint < 0) {
    RunConfig expandable = run;
    expandable.expandable_segments = true;
    e.expandable_reserve_bytes = replay_reserve(s, expandable, t, e.paged_bytes, sr.grad_share,
                                                e.out_of_memory ? kNoCapacity : capacity)
                                     .varying;
  }
  // Within the capacity the cache stops there (release_cached_blocks and a retry), so every
  // reserved figure does. The replay the point comes from says how often the cache was released.
  if (capped && !e.out_of_memory) {
    const ReplayResult& point = run.packed ? reserve.fixed_replay : reserve.varying_replay;
    e.alloc_retries = point.alloc_retries;
    {
      const std::uint64_t allocated = e.train_peak_allocated_bytes;
      // A replay that released its cache ran into the capacity: its own high-water mark (the
      // capacity less at most the segment whose cudaMalloc failed) is then max_memory_reserved,
      // bound to the device rather than riding on the allocated peak.
      auto at_cap = [](std::uint64_t figure, const ReplayResult& r, std::uint64_t cap) {
        if (r.alloc_retries > 0) figure = std::max(figure, r.peak_reserved);
        return std::min(figure, cap);
      };
      e.train_peak_reserved_bytes = at_cap(e.train_peak_reserved_bytes, point, capacity);
      e.reserved_low_bytes = std::min(
          {e.reserved_low_bytes, std::max(capacity_low, allocated), e.train_peak_reserved_bytes});
      // Lengths that vary: a rising chain that reached the capacity says the cache fills the
      // device; a deeper chain fills it up to the most the allocator can hold (the smallest
      // context), where the range ends.
      if (!run.packed && reserve.varying_replay.alloc_retries > 0)
        e.reserved_high_bytes = std::max(e.reserved_high_bytes, capacity_high);
      e.reserved_high_bytes = std::min(e.reserved_high_bytes, capacity_high);
      e.reserved_high_bytes = std::max(e.reserved_high_bytes, e.train_peak_reserved_bytes);
      t.allocator_reserve = e.train_peak_reserved_bytes - allocated;
      e.expandable_reserve_bytes = std::min(e.expandable_reserve_bytes, capacity - allocated);
    }
  }
  t.cuda_context = k.cuda_context_bytes;
  // Several ranks: the NCCL communicator's own buffers (EstimatorConstants::nccl_*), outside
  // torch's allocator, in the device and pool figures.
  t.nccl_buffers = nccl_point;
  // The host side on the same pool, and the checkpoint's pages the load left cached.
  t.host_process = run.host.process_bytes;
  t.dataset = run.host.dataset_bytes;
  t.dataloader_workers = to_bytes(d(run.host.dataloader_workers) * d(run.host.worker_bytes));
  // Pinned host buffers of offloaded checkpointing sit on the same pool, outside the device view.
  const std::uint64_t outside =
      saturating_add(saturating_add(e.paged_bytes, host), e.pinned_host_bytes);
  const std::uint64_t beside = saturating_add(t.cuda_context, t.nccl_buffers);
  e.train_peak_device_bytes =
      saturating_add(saturating_add(e.train_peak_reserved_bytes, beside), e.paged_bytes);
  e.train_peak_device_low_bytes = saturating_add(
      saturating_add(e.reserved_low_bytes, saturating_add(k.cuda_context_low_bytes, nccl_low)),
      e.paged_bytes);
  e.train_peak_device_high_bytes = saturating_add(
      saturating_add(e.reserved_high_bytes, saturating_add(k.cuda_context_high_bytes, nccl_high)),
      e.paged_bytes);
  e.train_peak_pool_bytes =
      saturating_add(saturating_add(e.train_peak_reserved_bytes, beside), outside);
  e.train_peak_pool_low_bytes = saturating_add(
      saturating_add(e.reserved_low_bytes, saturating_add(k.cuda_context_low_bytes, nccl_low)),
      outside);
  e.train_peak_pool_high_bytes = saturating_add(
      saturating_add(e.reserved_high_bytes, saturating_add(k.cuda_context_high_bytes, nccl_high)),
      outside);
  if (capped && !e.out_of_memory) {
    // A larger context or more NCCL channels leave the allocator less: the high ends stop at the
    // reach too (plus what the figure holds outside it: paged states on a discrete GPU, and the
    // host side in the pool figure).
    const std::uint64_t reach = run.device_reach_bytes;
    const std::uint64_t device_cap =
        run.reach_unified ? reach - std::min(reach, saturating_add(host, e.pinned_host_bytes))
                          : saturating_add(reach, e.paged_bytes);
    const std::uint64_t pool_cap = run.reach_unified ? reach : saturating_add(reach, outside);
    e.train_peak_device_high_bytes =
        std::max(e.train_peak_device_bytes, std::min(e.train_peak_device_high_bytes, device_cap));
    e.train_peak_pool_high_bytes =
        std::max(e.train_peak_pool_bytes, std::min(e.train_peak_pool_high_bytes, pool_cap));
  }

  const std::uint64_t checkpoint = s.quant ? s.quant->weight_bytes : p.total * 2;
  e.largest_shard_bytes = shard.value_or(std::min(checkpoint, k.assumed_shard_bytes));
  // Load: the final weights accumulate while one mmap'd shard sits in the page cache; QLoRA also
  // holds that shard's bf16 device copy until it is quantized.
  // A pre-quantized checkpoint loads as stored: no 16-bit copy waits to be quantized.
  const bool quantize_on_load = run.method == Method::qlora && !stored_quantized;
  const std::uint64_t transient = e.largest_shard_bytes * (quantize_on_load ? 2 : 1);
  e.load_peak_pool_bytes = t.weights + transient + t.cuda_context + t.host_process;
  // Every file of the checkpoint was read once; its pages stay cached until reclaimed (measured
  // on a GB10: docs/domain.md), which CUDA cannot take without a flush.
  t.page_cache = run.host.page_cache_resident ? checkpoint : 0;
  return e;
}

}  // namespace sparkops::plan
