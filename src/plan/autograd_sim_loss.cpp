// The loss paths: what each one's code allocates and keeps from the head's logits through the
// loss's backward, tensor by tensor where the allocator replay follows them (autograd_sim.cpp adds
// the head's weight copies, LoRA and dequantized weight around it, then walks the layers).
#include "plan/autograd_sim_loss.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace sparkops::plan::sim {

namespace {

// torch.compile over the cross-entropy (torchtune 0.6.1 training/_compile.py compile_loss:
// CEWithChunkedOutputLoss.compute_cross_entropy compiled per chunk; transformers Trainer
// `torch_compile`: the whole model, whose forward computes the loss). AOTAutograd traces the
// upcast, log_softmax and nll_loss as one joint graph and the min-cut partitioner
// (torch/_functorch/partitioners.py min_cut_rematerialization_partition) chooses what to save:
// the upcast, exp and subtractions are pointwise and recomputable, the row reductions (max,
// sum of exp) are saved because their outputs are far smaller than their inputs
// (should_ban_recomputation's 4x rule), and the smallest cut is the model-dtype logits (a graph
// input, 2 B an element) plus those per-row statistics, never the fp32 copy or log-softmax
// (4 B an element). Inductor fuses the forward into reduction kernels (no fp32 logits-sized
// buffer) and the backward into one kernel that writes the logits' gradient in the model dtype
// (nll_loss_backward's scatter into zeros becomes a pointwise select: joint_graph.py
// scatter_upon_const_tensor). So: the logits are kept until the compiled backward ran, which
// replaces them with their model-dtype gradient.
LossForm compiled_cross_entropy(const Dims& d, const SimRun& run, double T, unsigned db) {
  LossForm lf;
  const double V = d.V;
  // The labels (int64: the padded/shifted target, or torchtune's hstack) and the rows' max and
  // log-sum-exp (fp32).
  const double rows = 8 * T + 8 * T;
  lf.saved = db * V * T + rows;
  lf.forward = lf.saved;
  lf.output_freed = db * V * T;
  if (run.loss == LossPath::chunked_output) {
    // One compiled graph per chunk (8 tensor_split pieces of the sequence): autograd runs every
    // chunk's backward (last chunk first) before any head matmul, so each chunk's gradient
    // replaces its logits, one chunk's both alive at once.
    const double chunk_rows =
        std::ceil(static_cast<double>(run.seq) / 8.0) * static_cast<double>(run.batch);
    lf.backward = lf.saved + db * V * std::min(T, chunk_rows);
  } else {
    // One graph: the whole gradient beside the kept logits until the kernel that writes it ends.
    lf.backward = lf.saved + db * V * T;
  }
  return lf;
}

// unsloth_zoo 2026.8.13 fused_losses/cross_entropy_loss.py get_chunk_size(target_gb=None): the
// target is half the device's free memory, at most 4 GiB (the cap of 2026.7, commit d9fe1f43);
// one chunk while the fp32 logits (4·V a token) fit in it, else their GiB over the target rounded
// up to a multiple of 4. The plan takes the cap: a device with under 8 GiB free runs more, smaller
// chunks (the figure is then an upper bound).
double unsloth_ce_chunks(double T, double V) {
  const double exact = 4.0 * V * T / 1073741824.0 / 4.0;
  if (exact <= 1.0 + 1e-9) return 1.0;
  return std::ceil(exact / 4.0 - 1e-9) * 4.0;
}

}  // namespace

LossForm loss_form(const Family& f, const Dims& d, const SimRun& run, double T, unsigned db,
                   double lb) {
  if (compiles_loss(run)) return compiled_cross_entropy(d, run, T, db);
  LossForm lf;
  const double V = d.V;
  const bool head_trainable = run.method == TrainMethod::full;
  // What the loss's backward frees before the head's: the fp32 log-softmax (or softmax) output.
  lf.output_freed = 4 * V * T;
  switch (run.loss) {
    case LossPath::hf: {
      // transformers >= 4.49 (PR #35646, through 4.5x): LlamaForCausalLM.forward keeps its
      // model-dtype `logits` (the soft-capped ones for Gemma-2, whose tanh keeps its output)
      // while loss_utils.py ForCausalLMLoss makes its fp32 copy (`.float()`: none when the logits
      // are fp32), pads the labels (int64, b x (s+1)) and shifts them (`.contiguous()`, b x s),
      // and cross-entropy's log_softmax writes its fp32 output: the forward's peak. After the
      // loss, log_softmax's output and nll_loss's target are what autograd keeps; the caller's
      // logits die with Trainer.compute_loss's `outputs`, before backward.
      const double cap = f.final_softcap ? db * V * T : 0;
      const double copy32 = db == 4 ? 0 : 4 * V * T;
      const double b = static_cast<double>(run.batch);
      lf.saved = 4 * V * T + 8 * T + cap;
      lf.forward = db * V * T + copy32 + 4 * V * T + 8 * (T + b) + 8 * T + cap;
      // log_softmax_backward: saved output + incoming grad + grad input, all fp32.
      lf.backward = 12 * V * T + 8 * T + cap;
      lf.forward_blocks = {{db * V * T}, {copy32}, {8 * (T + b)}};
      // nll_loss_backward's gradient, then log_softmax_backward's grad input: both die, with the
      // saved log-softmax, once the grad input exists.
      lf.backward_blocks = {{4 * V * T, 1}, {4 * V * T}};
      lf.saved_freed_after = 1;
      break;
    }
    case LossPath::hf_shifted: {
      // transformers <= 4.45 LlamaForCausalLM.forward (4.36: `logits = self.lm_head(h);
      // logits = logits.float()`, the model-dtype logits dying with the rebinding) and the remote
      // code of that era (Qwen-1 modeling_qwen.py, ChatGLM3, Baichuan-2: bf16 logits that
      // autocast's fp32 cross_entropy casts): `shift_logits = logits[..., :-1, :].contiguous()`
      // copies all but each sequence's last position before CrossEntropyLoss, whose log_softmax
      // writes its fp32 output over those b x (s - 1) rows: 12 V bytes a token at the forward's
      // peak (the fp32 logits, their shifted copy, the log-softmax; in remote code the bf16
      // logits, their bf16 shifted copy and autocast's fp32 cast of it, the same bytes in bf16).
      // After the loss, the log-softmax and nll_loss's shifted int64 target are what autograd
      // keeps. Backward: log_softmax_backward's saved output, incoming grad and grad input
      // (fp32, shifted rows); slice's backward then zero-fills a full-size fp32 gradient and
      // copies the grad input into it (torch slice_backward: `at::zeros(input_sizes)`), after
      // the saved output and nll_loss's gradient are gone: below the 12 V peak, but one more
      // logits-sized block for the allocator.
      const double rows = T - static_cast<double>(run.batch);
      const double cap = f.final_softcap ? db * V * T : 0;
      lf.saved = 4 * V * rows + 8 * rows + cap;
      lf.forward = 4 * V * T + 4 * V * rows + 4 * V * rows + 8 * rows + cap;
      lf.backward = 12 * V * rows + 8 * rows + cap;
      lf.output_freed = 4 * V * rows;
      // The model-dtype logits die once their fp32 copy exists (none in fp32).
      if (db == 4)
        lf.forward_blocks = {{4 * V * T}, {4 * V * rows}};
      else
        lf.forward_blocks = {{db * V * T, 1}, {4 * V * T}, {4 * V * rows}};
      lf.backward_blocks = {{4 * V * rows, 1}, {4 * V * rows}, {4 * V * T}};
      lf.saved_freed_after = 1;
      break;
    }
    case LossPath::hf_shifted_kept: {
      // transformers 4.46-4.48: LlamaForCausalLM.forward binds `logits = self.lm_head(...)`
      // (Gemma-2: soft-capped, tanh keeping its output) and calls `self.loss_function(logits,
      // labels, self.vocab_size, **loss_kwargs)`; loss/loss_utils.py ForCausalLMLoss upcasts
      // into its own name (`logits = logits.float()`: none when the logits are fp32), copies the
      // shifted rows (`shift_logits = logits[..., :-1, :].contiguous()`) and the shifted labels
      // (`labels[..., 1:].contiguous()`, int64), then fixed_cross_entropy's cross_entropy (sum
      // over num_items_in_batch, or mean) writes its fp32 log-softmax over b x (s - 1) rows. The
      // caller's model-dtype logits live through all of it (the model returns them in its output,
      // which Trainer.compute_loss drops with the loss, before backward): 14 V bytes a token at
      // the forward's peak in bf16 (2 + 4 + 4 + 4), 12 V in fp32 (the upcast is the same tensor).
      // What autograd keeps and the backward are hf_shifted's: the saved log-softmax and target;
      // nll_loss's gradient and log_softmax's grad input over the shifted rows, then
      // slice_backward's full-size zero-filled fp32 gradient (clone's backward passes the
      // gradient through), then to_copy's model-dtype gradient for the head.
      const double rows = T - static_cast<double>(run.batch);
      const double cap = f.final_softcap ? db * V * T : 0;
      const double copy32 = db == 4 ? 0 : 4 * V * T;
      lf.saved = 4 * V * rows + 8 * rows + cap;
      lf.forward = db * V * T + copy32 + 4 * V * rows + 4 * V * rows + 8 * rows + cap;
      lf.backward = 12 * V * rows + 8 * rows + cap;
      lf.output_freed = 4 * V * rows;
      // Every transient lives to the phase's end: the caller's logits, the upcast and the
      // shifted copy (function locals until ForCausalLMLoss returns).
      if (db == 4)
        lf.forward_blocks = {{4 * V * T}, {4 * V * rows}};
      else
        lf.forward_blocks = {{db * V * T}, {copy32}, {4 * V * rows}};
      lf.backward_blocks = {{4 * V * rows, 1}, {4 * V * rows}, {4 * V * T}};
      lf.saved_freed_after = 1;
      break;
    }
    case LossPath::chunked:
      if (run.whole_head) {
        // LitGPT finetune/full.py: the whole head's logits (`lb` bytes: Fabric's fp32 copy) held
        // by the loop; chunked_cross_entropy(logits[..., :-1, :], targets[..., 1:]) reshapes the
        // b x (s - 1) shifted rows (a view for b = 1, a copy for b > 1: the slice is not
        // contiguous, and the function's local name keeps it until it returns), splits them into
        // 128-row chunks and runs F.cross_entropy(reduction="none") on each: every chunk's
        // log-softmax is what nll_loss keeps. Backward: chunk by chunk, nll_loss's gradient and
        // log_softmax's grad-input (one chunk's) replace its saved log-softmax; split's backward
        // then cats the chunks' gradients into a new b x (s - 1) x V one (torch split_backward ->
        // at::cat) and slice's backward zero-fills a full b x s x V gradient and copies it in
        // (slice_backward: at::zeros(input_sizes)): the loop's logits, the rows' gradient and
        // the full one alive at once; then ToCopyBackward casts it to the model dtype for the
        // head (fp32_logits_grad below).
        const double rows = T - static_cast<double>(run.batch);
        const double C = std::min(rows, 128.0);
        const double copy = run.batch > 1 ? lb * V * rows : 0;
        lf.saved = lb * V * rows + 8 * rows;
        lf.output_freed = lb * V * rows;
        lf.forward = lb * V * T + copy + lb * V * rows + 8 * rows;
        lf.backward = lb * V * rows + 8 * rows + std::max(2 * lb * V * C, lb * V * T);
        break;
      }
      // LitGPT utils.py chunked_cross_entropy: F.cross_entropy on each chunk as the loss receives
      // it (the model dtype, or Fabric's fp32 copies: outputs_fp32), whose log_softmax output
      // nll_loss keeps; its gradient is that dtype's too, and ToCopyBackward has cast it to the
      // model dtype before the head's backward (no fp32 gradient at the head).
      lf.saved = lb * V * T + 8 * T;
      lf.output_freed = lb * V * T;
      lf.forward = 2 * lb * V * T + 8 * T;
      // nll_loss grad and log_softmax grad-input of one 128-token chunk at a time.
      lf.backward =
          lb * V * T + 8 * T + 2 * lb * V * std::min(T, 128.0 * static_cast<double>(run.batch));
      break;
    case LossPath::fused: {
      // Liger-Kernel v0.8.2 (ops/fused_linear_cross_entropy.py, the same allocations since v0.5.0
      // dropped the chunk's fp32 copy), reduction "mean"/"sum", accum_dtype None, as
      // LigerForCausalLMLoss calls it: `labels = pad(labels, (0, 1))` (int64, b x (s+1), the name
      // keeps it to the call's end) and `labels[..., 1:].contiguous()` (b x s); hidden_states
      // .view(-1, H), no copy. The forward allocates grad_input (zeros_like the input),
      // grad_weight (zeros_like the head, when it trains), grad_bias (zeros_like the head's bias,
      // when it has one, trained or not), loss_1d (fp32) and target_mask (bool) first, then per
      // chunk of next_power_of_2(ceil(BT / ceil(V / H))) rows: the chunk's logits in the model
      // dtype (`_input_chunk @ weight.t()`; `+ bias` a second one while the first lives), which
      // liger_cross_entropy_kernel overwrites with their gradient in place (soft-capping
      // included); then one at a time: `grad_input[s:e] = grad_logits_chunk @ weight` (chunk x H
      // before the slice copy), `grad_weight += torch.mm(grad_logits_chunk.t(), _input_chunk)
      // .float()` (V x H in the model dtype and its fp32 copy, none in fp32), the bias's column
      // sum (V). ctx keeps grad_input, grad_weight and grad_bias; backward scales them in place
      // (element_mul_kernel) and returns them: nothing is allocated, and grad_input is the
      // hidden state's gradient. The saved set comes first and the chunk's transients after it,
      // the replay's own order for an unlisted path: no blocks listed.
      const double inc = std::ceil(V / d.h);
      const double chunk =
          std::pow(2.0, std::max(0.0, std::ceil(std::log2(std::max(1.0, std::ceil(T / inc))))));
      const double C = std::min(chunk, T);
      const double b = static_cast<double>(run.batch);
      const double bias = f.lm_head_bias ? V * db : 0;
      lf.saved = d.h * db * T + (head_trainable ? V * d.h * db : 0) + bias;
      const double labels_and_rows = 8 * (T + b) + 8 * T + 4 * T + T;
      double after_logits = C * d.h * db;
      if (f.lm_head_bias) after_logits = std::max({after_logits, C * V * db, bias});
      if (head_trainable) after_logits = std::max(after_logits, V * d.h * (db + (db == 4 ? 0 : 4)));
      lf.forward = lf.saved + labels_and_rows + C * V * db + after_logits;
      lf.backward = lf.saved;
      break;
    }
    case LossPath::fused_unsloth: {
      // unsloth 2026.8.19 llama.py CausalLM_fast_forward -> unsloth_zoo 2026.8.13
      // fused_losses/cross_entropy_loss.py unsloth_fused_ce_loss (target_gb None, torch_compile
      // True, no bias) -> UnslothFusedLoss.forward: the shifted labels (`torch.empty_like(labels)`,
      // int64, b x s), grad_inputs (`empty_like(hidden_states)`), grad_lm_head (`zeros_like`, when
      // the head trains); n_chunks from get_chunk_size (unsloth_ce_chunks above), each chunk
      // torch.chunk's ceil(b s / n) rows. Each chunk runs
      // torch.func.grad_and_value(compute_fused_ce_loss) compiled whole (inductor, fullgraph): the
      // head's matmul writes the chunk's logits in the model dtype (an extern mm's output buffer);
      // the fp32 upcast, log-softmax, loss and their gradient are one graph whose pointwise
      // gradient kernel inductor writes over the logits (inplace_buffers: their last use); then the
      // mm for the chunk's input gradient (chunk x h, copied into grad_inputs) and, for a trained
      // head, the chunk's V x h weight gradient (model dtype, add_ into grad_lm_head). ctx keeps
      // grad_inputs and grad_lm_head; backward returns them and allocates nothing. Saved set first,
      // the chunk after it: no blocks listed.
      const double C = std::ceil(T / unsloth_ce_chunks(T, V));
      lf.saved = d.h * db * T + (head_trainable ? V * d.h * db : 0);
      const double after_logits = std::max(C * d.h * db, head_trainable ? V * d.h * db : 0.0);
      lf.forward = lf.saved + 8 * T + C * V * db + after_logits;
      lf.backward = lf.saved;
      break;
    }
    case LossPath::chunked_output: {
      // torchtune 0.6.1: TransformerDecoder.chunked_output runs the head on each of
      // num_output_chunks = 8 `tensor_split`s of the sequence (model-dtype logits, all alive
      // until the recipe's `del logits` after the loss); CEWithChunkedOutputLoss.forward then
      // takes one chunk at a time: `F.cross_entropy(logits.float(), labels, reduction="sum")`,
      // whose log_softmax output (fp32) nll_loss keeps. Labels: hstack(labels[..., 1:], ignore)
      // (int64). Forward at chunk k: the model-dtype logits, the log-softmax of the chunks
      // before it, its fp32 copy and its log-softmax. Backward: autograd's ready queue runs the
      // later-created nodes first, so every chunk's loss backward (last chunk first) runs before
      // any head matmul: at chunk k, the log-softmax of chunks 0..k, nll_loss's gradient and
      // log_softmax's grad-input (fp32, chunk-sized) and the model-dtype logits gradients of the
      // chunks after k, which wait for the head's backward.
      constexpr std::uint64_t kChunks = 8;
      const std::uint64_t s = run.seq;
      const double b = static_cast<double>(run.batch);
      double before = 0, fwd = 0, bwd = 0;
      for (std::uint64_t k = 0; k < std::min(kChunks, s); ++k) {
        const double rows = static_cast<double>(s / kChunks + (k < s % kChunks ? 1 : 0)) * b;
        const double through = before + rows;
        fwd = std::max(fwd, 4 * V * before + 8 * V * rows);
        bwd = std::max(bwd, 4 * V * through + 8 * V * rows + db * V * (T - through));
        before = through;
      }
      lf.saved = 4 * V * T + 8 * T;
      lf.forward = db * V * T + fwd + 8 * T;
      lf.backward = bwd + 8 * T;
      break;
    }
    case LossPath::chunked_nll: {
      // trl 1.9.0 sft_trainer.py _chunked_cross_entropy_loss over the b·(s-1) shifted rows:
      // hidden[..., :-1, :].reshape (a copy when b > 1, freed after the gather), hidden[order]
      // (the gathered copy every chunk's checkpoint keeps), order (kept by IndexBackward) and
      // labels[order] (int64 each); then chunks of C = _CHUNKED_LM_HEAD_CHUNK_SIZE rows, each
      // `_chunk` under torch.utils.checkpoint(use_reentrant=False): h.float() @ w.float().t()
      // (an fp32 copy of the head weight), Gemma-2's soft-cap (divide, tanh, multiply),
      // log_softmax, nll_loss, argmax and the entropy -(exp(log_p) * log_p), nothing saved in
      // forward.
      const double rows = std::max(1.0, T - static_cast<double>(run.batch));
      const double C =
          std::min(rows, static_cast<double>(std::max<std::uint64_t>(run.nll_chunk, 1)));
      const bool several = rows > C;
      const double CV = C * V * 4;
      const double w32 = V * d.h * 4;
      lf.saved = d.h * db * rows + 16 * rows;
      // Forward: at the mm, the chunk's fp32 hidden, w32 and the logits; at the entropy's
      // product, the (capped) logits, log_p, exp(log_p) and the product (the cap's steps hold
      // two chunk-sized tensors at a time, fewer).
      const double chunk_fwd = std::max(w32 + C * d.h * 4 + CV, 4 * CV);
      lf.forward = lf.saved + std::max(run.batch > 1 ? d.h * db * rows : 0.0, chunk_fwd);
      // Backward, chunk by chunk (the last first): the recompute runs the whole `_chunk` again
      // and keeps what the graph saves (w32; the fp32 hidden when the head trains; log_p;
      // tanh's output under a cap), so at the entropy's product the logits, log_p, exp(log_p)
      // and the product are alive beside them. Then nll_loss's and log_softmax's gradients
      // beside log_p; with a trained head, mm's weight and input gradients (fp32). From the
      // second chunk on, the gathered hidden's gradient (SliceBackward's full-size zeros,
      // accumulated) and the trained head's gradient are alive throughout.
      const double cap = f.final_softcap ? CV : 0;
      const double h32 = head_trainable ? C * d.h * 4 : 0;
      const double recompute = w32 + h32 + 4 * CV + cap;
      // (A trained head's weight gradient is cast to the model dtype after MmBackward has
      // released w32: less than the moment beside it.)
      const double grads =
          std::max(w32 + h32 + 3 * CV + cap,
                   head_trainable ? w32 + h32 + CV + C * d.h * 4 + V * d.h * 4 : 0.0);
      const double carried = several ? d.h * db * rows + (head_trainable ? V * d.h * db : 0) : 0;
      // SliceBackward of a later chunk: a new full-size gradient beside the accumulated one.
      const double slice = (several ? 2 : 1) * d.h * db * rows + C * d.h * db;
      lf.backward = lf.saved + std::max(std::max(recompute, grads) + carried, slice);
      break;
    }
    case LossPath::megatron: {
      // Megatron-LM d98e8a64 megatron/core/tensor_parallel/cross_entropy.py
      // _VocabParallelCrossEntropy (tensor-parallel size 1; fused_cross_entropy.py runs the same
      // helpers): calculate_logits_max makes the one fp32 copy of the logits (`.float()`, none
      // when they are fp32 already) and max(dim=-1) (values fp32, indices int64); subtract-max,
      // exp and divide run in place on that copy, which ctx keeps as the softmax together with
      // target_mask (bool) and masked_target_1d (int64). language_module.py
      // compute_language_model_loss transposes the labels [b s] => [s b] and the loss back
      // (.contiguous() copies, when b > 1); NeMo 2 masked_token_loss (nemo/lightning/
      // megatron_parallel.py) multiplies by the batch's float loss_mask, which the mul keeps.
      const double copy32 = db == 4 ? 0 : 4 * V * T;
      const double transposed = run.batch > 1 ? 1 : 0;
      lf.saved = 4 * V * T + 9 * T + 4 * T;
      // Forward peak, at log(sum_exp) - predicted: the model-dtype logits (alive in GPTModel
      // until it returns the loss), the fp32 copy, the [s b] labels (8T) and the helpers' int64
      // and fp32 temporaries alive at once: target_mask 1, masked_target 8, arange 8,
      // logits_max 4, predicted_logits 4, sum_exp 4, the log 4, the loss 4 (37 bytes a token).
      lf.forward = db * V * T + copy32 + 37 * T + 8 * T * transposed;
      // Backward: the gradient is written in place into the saved softmax; its working set
      // (grad_output 4, 1 - target_mask.float() 4, arange 8, the gathered target column 4:
      // 20 bytes a token) comes before the engine casts the returned fp32 gradient to the
      // logits' dtype (validate_outputs; the fused path's .to(bfloat16)) while it lives.
      // Backward has already freed the loss_mask (4T) by then.
      const double copy_back = db == 4 ? 0 : db * V * T;
      lf.backward = 4 * V * T + 9 * T + std::max(copy_back, 20 * T);
      break;
    }
  }

  // The head's backward receives the logits' gradient in the model dtype; the one-shot paths
  // also hold the fp32 gradient it was cast from. torchtune's chunks freed theirs chunk by chunk,
  // Megatron's (the saved softmax, worked in place) is freed once the engine has cast it, LitGPT's
  // chunked loss casts each chunk's; LitGPT full.py's whole head: slice_backward's full gradient
  // is in the logits' dtype (Fabric's fp32), cast for the head.
  if (run.loss == LossPath::chunked && run.whole_head)
    lf.logits_grad32 = lb == 4 && db != 4 ? 4 * V * T : 0;
  else if (run.loss != LossPath::chunked_output && run.loss != LossPath::megatron &&
           run.loss != LossPath::chunked)
    lf.logits_grad32 = 4 * V * T;
  return lf;
}

}  // namespace sparkops::plan::sim

namespace sparkops::plan {

bool compiles_loss(const SimRun& run) {
  return run.compiled &&
         (run.loss == LossPath::hf || run.loss == LossPath::hf_shifted ||
          run.loss == LossPath::hf_shifted_kept || run.loss == LossPath::chunked_output);
}

}  // namespace sparkops::plan
