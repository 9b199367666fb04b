// The step walk: sums the graphs' saved sets over the layers, adds the loss path and walks
// backward for the transient peak (autograd_sim_graph.* builds the graphs, autograd_sim_families.*
// loads the family data).
#include "plan/autograd_sim.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "plan/autograd_sim_families.hpp"
#include "plan/autograd_sim_graph.hpp"
#include "plan/autograd_sim_loss.hpp"

namespace sparkops::plan {

using models::Architecture;
using namespace sim;

Result<SimResult> simulate_step(const Architecture& a, const SimRun& run) {
  const auto& fs = families();
  if (!fs.error.empty()) return fail(Errc::malformed, fs.error);
  SimResult res;
  res.family = std::string(program_for(a.family, run, &res.family_known));
  const Family& f = fs.by_name.at(res.family);
  const double T = static_cast<double>(run.batch) * static_cast<double>(run.seq);
  const unsigned db = run.model_bytes;
  const Dims d = dims_for(a, run);
  const bool full = run.method == TrainMethod::full;
  const bool ckpt = run.ckpt == Checkpointing::per_layer;
  // input_ids and labels, int64; the collator's position_ids where the family takes them.
  res.inputs = (f.position_ids ? 24 : 16) * T;

  auto built = step_graphs(f, run, d, db);
  if (!built) return tl::unexpected(built.error());
  const StepGraphs& G = **built;
  const Graph& g = G.stem;
  const std::set<int>& stem_saved = G.stem_saved;
  const bool has_rope = G.has_rope;
  const auto* mid = &G.mid;
  const auto* first = &G.first;
  // Saved per layer, split into: its own tensors, its input (storage 0), the shared cos/sin.
  auto own_saved = [&](const Graph& lg) {
    std::set<int> own;
    for (int s : lg.saved)
      if (s > 2 || (s > 0 && !has_rope)) own.insert(s);
    return own;
  };
  auto uses_rope = [&](const Graph& lg) { return has_rope && lg.saved.count(1) > 0; };
  const double L = static_cast<double>(a.layers);
  const double mid_own = saved_bytes(mid->first, own_saved(mid->first), T);
  const double first_own = saved_bytes(first->first, own_saved(first->first), T);
  const double layer_in = d.h * db * T;
  // Checkpointed layer inputs on the device: all of them, or what offloading leaves
  // (SimRun::inputs_kept, inputs_kept_forward).
  const double inputs_kept = run.inputs_kept > 0 ? std::min(L, double(run.inputs_kept)) : L;
  const double inputs_kept_forward =
      run.inputs_kept_forward > 0 ? std::min(L, double(run.inputs_kept_forward)) : L;
  const bool mid_saves_in = mid->first.saved.count(0) > 0;
  const bool first_saves_in = first->first.saved.count(0) > 0;
  double rope_bytes = has_rope ? 2 * d.hd * f.rotary_fraction * db * T : 0;
  bool rope_used = uses_rope(mid->first) || uses_rope(first->first);
  if (f.rope_shared == "freqs_fp32") {
    // GPTModel's rotary_pos_emb, kept by every FusedRoPEFunc a gradient flows through.
    rope_bytes = d.s * d.hd * 4;
    rope_used = first->first.keeps_freqs || (L > 1 && mid->first.keeps_freqs);
  } else if (f.rope_shared == "none" || f.rope_shared == "cache") {
    rope_bytes = 0;
  }
  const double mask_bytes = run.attn == AttnKernel::eager ? d.s * db * T : 0;
  // Inputs bitsandbytes keeps as ctx attributes: live until the graph is dropped.
  const double mid_held = saved_bytes(mid->first, mid->first.held, T);
  const double first_held = saved_bytes(first->first, first->first.held, T);
  const bool qlora = run.method == TrainMethod::qlora;
  const bool head_held = qlora && run.head_4bit && run.bnb_saves_input;
  const double head_dequant =
      qlora && run.head_4bit ? d.V * d.h * db * std::max(1u, run.dequant_copies) : 0;

  const Graph& fg = G.fg;
  const double final_own = saved_bytes(
      fg,
      [&] {
        std::set<int> s = fg.saved;
        s.erase(0);
        return s;
      }(),
      T);
  const bool final_saves_in = fg.saved.count(0) > 0;
  const double h_out = d.h * db * T;
  double stem = saved_bytes(g, stem_saved, T);
  // enable_input_require_grads makes the embedding output a leaf that requires grad: the graph's
  // AccumulateGrad keeps it alive and backward gives it a .grad, live until zero_grad.
  if ((ckpt || f.embed_requires_grad) && !full) {
    res.leaf_grad = d.h * db * T;
    if (f.embed_scale || f.learned_positions) stem += d.h * db * T;
  }

  double acts = stem + h_out + final_own;
  if (!ckpt) {
    acts += first_own + (L - 1) * mid_own;
    acts += (first_saves_in ? layer_in : 0) + (L - 1) * (mid_saves_in ? layer_in : 0);
    acts += final_saves_in ? layer_in : 0;
    if (rope_used) acts += rope_bytes;
  } else {
    // Reentrant checkpoint per layer: each layer's inputs (hidden, cos, sin, mask) are saved.
    acts += inputs_kept * layer_in + rope_bytes + mask_bytes;
    acts += final_saves_in ? layer_in : 0;
  }
  res.activations = acts;

  // ---- loss ----
  const double V = d.V;
  const bool head_trainable = full;
  // The loss path (autograd_sim_loss.cpp), from the head's logits through the loss's backward.
  // The logits' bytes as the chunked loss and the loop hold them (Fabric hands back fp32 copies).
  const double lb = run.outputs_fp32 && run.loss == LossPath::chunked ? 4 : db;
  LossForm lf = loss_form(f, d, run, T, db, lb);
  double loss_saved = lf.saved, fwd_extra = lf.forward, loss_bwd = lf.backward;
  const double loss_output_freed = lf.output_freed;
  res.loss_forward_blocks = std::move(lf.forward_blocks);
  res.loss_backward_blocks = std::move(lf.backward_blocks);
  res.loss_saved_freed_after = lf.saved_freed_after;
  // What the listed blocks account for; the terms added below (the head's copies, dequantized
  // weight and LoRA) join the replay as one more block each phase.
  const double listed_forward = fwd_extra - loss_saved;
  const double listed_backward = loss_bwd - loss_saved;
  // NormHead (Baichuan-2): F.normalize(weight) is a new head-sized tensor every forward, and
  // F.linear keeps it (mm saves its second operand for the input's gradient) until the head's
  // backward ran (the model's own loss path; other paths are other code).
  const bool hf_loss = run.loss == LossPath::hf || run.loss == LossPath::hf_shifted ||
                       run.loss == LossPath::hf_shifted_kept;
  if (f.norm_head && hf_loss) {
    const double w = V * d.h * db;
    res.head_copy = w;
    loss_saved += w;
    fwd_extra += w;
    loss_bwd += w;
  }
  // autocast over an fp32 base (or a QLoRA's fp16 unquantized head under bf16 autocast): the
  // frozen head's linear casts its weight per call and keeps the copy for its input's gradient:
  // one call (hf), one per 128-token chunk (LitGPT lm_head_chunk_size, x.split(128, dim=1)).
  const bool head_cast =
      run.method == TrainMethod::lora || (run.method == TrainMethod::qlora && !run.head_4bit);
  if (run.autocast_base_copies && head_cast && (hf_loss || run.loss == LossPath::chunked)) {
    const double calls =
        run.loss == LossPath::chunked ? std::ceil(static_cast<double>(run.seq) / 128.0) : 1.0;
    const double copies = calls * V * d.h * 2;
    // One call: one head-sized block at every length, which a rise of shapes reuses (as the
    // NormHead copy); per chunk, the chunks' copies stay with the loss's own blocks.
    if (calls == 1.0) res.head_copy += copies;
    loss_saved += copies;
    fwd_extra += copies;
    loss_bwd += copies;
  }
  // A loop that holds its `logits` name keeps the model-dtype logits through backward, where the
  // loss alone would have kept only what cross-entropy saved: LitGPT's fit() (chunked), and a
  // hand-written loop's `logits = model(x); loss = F.cross_entropy(logits.float()...)` (hf: the
  // upcast copy and log-softmax are the loss's, the bf16 logits the loop's).
  if (run.prev_graph_held && (run.loss == LossPath::chunked || hf_loss)) {
    loss_saved += lb * V * T;
    loss_bwd += lb * V * T;
  }
  // A 4-bit lm_head (chunked or not) dequantizes the whole head weight for its matmul.
  const bool no_logits = run.loss == LossPath::fused || run.loss == LossPath::fused_unsloth ||
                         run.loss == LossPath::chunked_nll;
  // LoRA on the head (LitGPT lora.py LoRALinear.forward: pretrained = self.linear(x); lora =
  // (self.lora_dropout(x) @ A^T @ B^T) * scaling; pretrained + lora. PEFT lora.Linear alike):
  // the dropped copy of x and its bool mask stay for A's gradient (x itself without dropout),
  // x @ A^T for B's; each call's lora output and its scaled copy are two more logits-sized
  // temporaries beside the base output, after the base matmul's dequantized weight is gone; in
  // backward the scaled output's gradient is one more.
  double head_lora_fwd = 0;
  bool head_lora_keeps_h = false;
  if (run.lora_head && !full && !no_logits) {
    const double C =
        run.loss == LossPath::chunked ? std::min(T, 128.0 * static_cast<double>(run.batch)) : T;
    const double ab = run.adapter_bytes;
    double kept = T * d.r * ab;
    if (run.lora_dropout > 0)
      kept += T * d.h * (1 + ab);
    else if (ab != db)
      kept += T * d.h * ab;
    else
      head_lora_keeps_h = true;
    loss_saved += kept;
    fwd_extra += kept;
    loss_bwd += kept + C * V * ab;
    head_lora_fwd = 2 * C * V * ab;
  }
  // What the forward holds beside the loss's own tensors (head-LoRA inputs, autocast copies,
  // NormHead), before the head's transient joins it: LitGPT's loop splits its peak there (below).
  const double fwd_before_head = fwd_extra;
  if (!no_logits) fwd_extra += std::max(head_dequant, head_lora_fwd);
  const bool head_keeps_h = (head_trainable || head_held || head_lora_keeps_h) && !no_logits;
  res.loss = loss_saved - (head_keeps_h ? 0 : h_out);
  res.rope = rope_bytes;
  res.final_saved = final_own + (final_saves_in ? layer_in : 0);
  res.loss_forward_transient = std::max(0.0, fwd_extra - loss_saved);
  res.loss_backward_transient = std::max(0.0, loss_bwd - loss_saved);
  if (!res.loss_forward_blocks.empty() && res.loss_forward_transient > listed_forward)
    res.loss_forward_blocks.push_back({res.loss_forward_transient - listed_forward});
  if (!res.loss_backward_blocks.empty() && res.loss_backward_transient > listed_backward)
    res.loss_backward_blocks.push_back({res.loss_backward_transient - listed_backward});
  // The previous step's graph, when the loop still holds it: its ctx-held bitsandbytes inputs
  // (none under reentrant checkpointing: the recomputed graphs were local to each backward) and
  // its logits (the model-dtype outputs the loop's `logits` name keeps).
  if (run.prev_graph_held) {
    const double held = ckpt ? 0 : first_held + (L - 1) * mid_held + (head_held ? h_out : 0);
    const double logits = no_logits ? 0 : lb * V * T;
    res.prev_graph = held + logits;
  }
  // The loop rebinds `logits` when this step's model output returns, before its loss: at the
  // HF loss's peak the previous step's logits are gone and the loop's are this step's, which
  // fwd_extra counts as the caller's (the allocation of the new logits beside the old, 2 x the
  // model-dtype logits, stays below that peak). The chunked path keeps the previous logits in
  // its forward peak (memtrace/litgpt_agreement.py states what taking them out does there).
  const double prev_logits_gone = run.prev_graph_held && hf_loss ? db * V * T : 0;
  res.forward_peak_extra =
      std::max(0.0, res.activations + fwd_extra + res.prev_graph - prev_logits_gone);
  if (run.loss == LossPath::chunked_output && !head_keeps_h) {
    // torchtune 0.6.1: TransformerDecoder.forward returns the list of logits chunks and its `h`
    // dies with the frame; the recipe's loss runs after that. A frozen head saved nothing of h
    // (with b > 1 each tensor_split chunk is copied by matmul's fold, the copy freed after its
    // matmul), so h is gone at the loss: two high points, the last head call beside every
    // chunk's logits and h, and the loss's chunks without h.
    res.forward_peak_extra =
        std::max({0.0, res.activations + db * V * T + std::max(head_dequant, head_lora_fwd),
                  res.activations - h_out + fwd_before_head});
  }
  if (run.prev_graph_held && run.loss == LossPath::chunked && run.whole_head) {
    // LitGPT finetune/full.py fit(): the same loop (`logits` rebound when the model returns,
    // `loss` a float after backward), one head call. High points: the head's output beside the
    // previous step's graph and logits; Fabric's convert_output, its fp32 copy while the model's
    // own output still lives (the function's local until forward returns); the loss (the loop's
    // logits, the shifted reshape's copy for b > 1 and every chunk's log-softmax), the previous
    // step gone.
    const double rows = T - static_cast<double>(run.batch);
    const double own = lb * V * T + lb * V * rows * (run.batch > 1 ? 2 : 1) + 8 * rows;
    const double extras = fwd_before_head - own;
    const double out = db * V * T;
    const double dq_one = head_dequant / std::max(1u, run.dequant_copies);
    const double call = std::max(head_dequant, head_dequant > 0 ? dq_one + out : out);
    const double at_head = res.activations + res.prev_graph + extras + call;
    const double at_convert =
        run.outputs_fp32 ? res.activations + res.prev_graph + extras + out + lb * V * T : 0;
    const double at_loss = res.activations + fwd_before_head;
    res.forward_peak_extra = std::max({0.0, at_head, at_convert, at_loss});
  } else if (run.prev_graph_held && run.loss == LossPath::chunked) {
    // LitGPT fit() (litgpt 43c44323, a509064d, 00af8b0d finetune/lora.py): `loss` becomes a float
    // after every backward (`running_loss.compute().item()`, log_interval 1 in TrainArgs and every
    // config-hub yaml), so the previous graph lives only through `logits`, whose grad_fns reach
    // every node, until `logits = model(...)` returns. Two high points, not one:
    // - the head (lora.py GPT.forward, `[self.lm_head(x_i) for x_i in x.split(128, dim=1)]`):
    //   the previous graph and logits, this step's chunks before the last, and the last chunk's
    //   call: the dequantized weight (copies) then its output, or a LoRA head's output with its
    //   product and scaled copy;
    // - with outputs_fp32, Fabric's convert_output (lightning fabric/wrappers.py
    //   _FabricModule.forward, plugins/precision/*.py `_convert_fp_tensor`): every chunk's fp32
    //   copy made while the model's own list of chunks still lives, the previous step's fp32
    //   logits beside them;
    // - the loss (utils.py chunked_cross_entropy): the logits and every chunk's log-softmax, the
    //   previous step gone; `logit_chunk.reshape(-1, V)` of the shifted last chunk
    //   (`logits[-1][..., :-1, :]`, not contiguous when b > 1) is a copy the local list keeps
    //   until the function returns.
    const double b = static_cast<double>(run.batch);
    const double chunks = std::ceil(static_cast<double>(run.seq) / 128.0);
    const double last = b * (static_cast<double>(run.seq) - 128.0 * (chunks - 1));
    const double logits = db * V * T, last_out = db * V * last;
    const double dq_one = head_dequant / std::max(1u, run.dequant_copies);
    const double lora_last = head_lora_fwd > 0 ? last_out + 2 * last * V * run.adapter_bytes : 0;
    const double call =
        std::max({head_dequant, head_dequant > 0 ? dq_one + last_out : last_out, lora_last});
    // Beside the loss's logits and log-softmax.
    const double extras = fwd_before_head - 2 * lb * V * T - 8 * T;
    const double at_head = res.activations + res.prev_graph + extras + (logits - last_out) + call;
    const double at_convert =
        run.outputs_fp32 ? res.activations + res.prev_graph + extras + logits + lb * V * T : 0;
    const double shifted_copy = run.batch > 1 ? lb * V * b * (last / b - 1) : 0;
    const double at_loss = res.activations + fwd_before_head + shifted_copy;
    res.forward_peak_extra = std::max({0.0, at_head, at_convert, at_loss});
  }
  // Inside the top layer's forward (forward_peak: each storage from its first use to its last,
  // a saved one to backward): the layers below it keep their saved sets (without
  // checkpointing) or their inputs (with it: the forward runs under no_grad and keeps nothing),
  // the causal mask is alive for the whole stack, and the layer's own temporaries (a LoRA
  // adapter's fp32 output and its scaled copy beside the base output, rope's products, a norm's
  // fp32 copies) come on top of what it has saved so far.
  const int skip = has_rope ? 3 : 1;
  const auto& top = L > 1 ? *mid : *first;
  if (!ckpt) {
    const double below = L > 1 ? first_own + (first_saves_in ? layer_in : 0) +
                                     (L - 2) * (mid_own + (mid_saves_in ? layer_in : 0))
                               : 0;
    res.forward_peak_extra = std::max(
        res.forward_peak_extra,
        stem + (rope_used ? rope_bytes : 0) + mask_bytes + below + layer_in + res.prev_graph +
            forward_peak(top.first, top.second, true, skip, T, run.dequant_copies));
  } else {
    res.forward_peak_extra =
        std::max(res.forward_peak_extra,
                 stem + inputs_kept_forward * layer_in + rope_bytes + mask_bytes + res.prev_graph +
                     forward_peak(top.first, top.second, false, skip, T, run.dequant_copies));
  }

  // ---- backward through one layer: reverse walk with reference-counted gradients ----
  // Reentrant checkpointing (torch/utils/checkpoint.py CheckpointFunction.backward, torch 1.13
  // through 2.x): the recomputed layer's backward runs inside the outer one as
  // torch.autograd.backward(outputs_with_grad, args_with_grad), where `args` (the gradient of the
  // layer's output handed to CheckpointFunction.backward) stays referenced by that frame until
  // the inner backward returns: the output's gradient is not freed when the walk passes the prim
  // that made the output (keep_out_grad).
  auto walk = [&](const Graph& lg, int out, bool with_saved, bool keep_out_grad) {
    // Returns {peak above the bytes live before the walk, param grads, saved released}.
    std::map<int, int> uses;  // storage -> prims that still need it
    for (const auto& p : lg.prims)
      for (int s : p.saved) ++uses[s];
    std::map<int, double> grad;  // tensor -> bytes of its gradient
    double cur = lg.tensors[out].elems * lg.tensors[out].bytes * T;
    double peak = cur, params = 0;
    grad[out] = cur;
    // Tensors whose gradient is the kept output gradient itself (through residual adds).
    std::set<int> kept_alias;
    if (keep_out_grad) kept_alias.insert(out);
    std::set<int> released;
    for (auto it = lg.prims.rbegin(); it != lg.prims.rend(); ++it) {
      const Prim& p = *it;
      // A tensor split into pieces (Tensor.split/chunk, derivatives.yaml split.Tensor and
      // split_with_sizes: split_backward / split_with_sizes_backward, FunctionsManual.cpp) gets
      // its gradient from one at::cat of the pieces' gradients, a new tensor of the whole's size
      // made while they are alive; the pieces' gradients go with the split's node. The engine runs
      // that node once every piece's gradient has arrived, before the node that made the whole.
      if (auto sp = lg.split_pieces.find(p.out); sp != lg.split_pieces.end()) {
        double pieces = 0;
        for (int t : sp->second)
          if (auto gi = grad.find(t); gi != grad.end()) {
            pieces += gi->second;
            gi->second = 0;
          }
        if (pieces > 0) {
          const double whole = lg.tensors[p.out].elems * lg.tensors[p.out].bytes * T;
          peak = std::max(peak, cur + whole);
          cur += whole - pieces;
          grad[p.out] += whole;
        }
      }
      // A gradient written into a saved storage (Prim::grad_into_saved) takes that storage's
      // bytes: nothing is allocated, and the storage is not freed when it is released below.
      const bool into_saved = with_saved && p.grad_into_saved >= 0 && !p.grad_inputs.empty() &&
                              !grad.count(p.grad_inputs.front());
      double add_b = 0;
      for (int t : p.grad_inputs)
        if (!(into_saved && t == p.grad_inputs.front()))
          add_b += lg.tensors[t].elems * lg.tensors[t].bytes * T;
      peak = std::max(peak, cur + add_b + p.extra * T + p.extra_abs + p.param_grad);
      for (const Moment& m : p.bwd_moments)
        peak = std::max(peak, cur + add_b + m.per_token * T + m.absolute + p.param_grad);
      params += p.param_grad;
      // Stepped in backward: the hook frees each gradient once its AccumulateGrad has run.
      if (!run.grads_stepped) cur += p.param_grad;
      for (int t : p.grad_inputs) {
        const double b = lg.tensors[t].elems * lg.tensors[t].bytes * T;
        if (into_saved && t == p.grad_inputs.front()) {
          grad[t] = b;
          continue;
        }
        if (grad.count(t)) {
          // Accumulated in place, unless the buffered gradient is the kept output gradient
          // itself (a residual's): CheckpointFunction's `args` still references it, so
          // InputBuffer::accumulate cannot reuse it and `old + new` is a new tensor.
          if (kept_alias.erase(t) > 0) {
            grad[t] = b;
            cur += b;
          }
          continue;
        }
        grad[t] = b;
        cur += b;
      }
      // An alias input's gradient is the output's gradient itself (an add's): its bytes go on
      // with the first alias input that has none yet, and are freed only when none takes them.
      const auto gi = grad.find(p.out);
      const bool free_out = gi != grad.end() && !(keep_out_grad && p.out == out);
      double passed = free_out ? gi->second : 0;
      for (int t : p.alias_inputs)
        if (!grad.count(t)) {
          grad[t] = passed;
          passed = 0;
          if (kept_alias.count(p.out)) kept_alias.insert(t);
        }
      if (free_out) {
        cur -= passed;
        gi->second = 0;
      }
      if (with_saved) {
        for (int s : p.saved) {
          if (--uses[s] == 0 && s != 0 && !lg.held.count(s) &&
              !(into_saved && s == p.grad_into_saved)) {
            cur -= lg.storages[s].per_token * T + lg.storages[s].absolute;
          }
        }
      }
    }
    return std::make_tuple(peak, params, cur);
  };
  auto [mid_peak, mid_params, mid_end] = walk(mid->first, mid->second, true, ckpt);
  (void)mid_end;
  {
    const Graph& lg = mid->first;
    const int out_storage = lg.tensors[mid->second].storage;
    for (int st = has_rope ? 3 : 1; st < static_cast<int>(lg.storages.size()); ++st) {
      if (st == out_storage) continue;
      res.layer_blocks.push_back({lg.storages[st].per_token * T + lg.storages[st].absolute,
                                  lg.saved.count(st) > 0, lg.storages[st].dequant});
    }
    res.layer_backward_peak = mid_peak;
    res.layer_saves_input = mid_saves_in;
  }
  auto [first_peak, first_params, first_end] = walk(first->first, first->second, true, ckpt);
  (void)first_end;
  const double head_grad = ((head_trainable ? V * d.h * db : 0) +
                            (run.lora_head && !full ? d.r * (d.h + V) * run.adapter_bytes : 0)) *
                           run.grad_share;
  const double norm_grad = (full ? d.h * db : 0) * run.grad_share;
  // What of them is still alive below the head (SimRun::grads_stepped: the hooks have stepped and
  // freed them, but a tied head's waits for the embedding's).
  const double head_grad_kept = run.grads_stepped && !a.tied_embeddings ? 0 : head_grad;
  const double norm_grad_kept = run.grads_stepped ? 0 : norm_grad;
  // Loss backward, then the lm_head backward (grad of logits in the model dtype + grad of h).
  // h (the head's input) is gone by then unless the trainable head saved it.
  const double h_kept = head_keeps_h ? 0 : h_out;
  double bwd = res.activations - h_kept + loss_bwd;
  // The head's backward: the logits' gradient in the model dtype, and the fp32 one it was cast
  // from where the path holds it (LossForm::logits_grad32). The fused and chunked-NLL paths have
  // no head backward: the fused forwards made the gradients, TRL's chunks recompute theirs inside
  // the loss's own backward (no_logits, above).
  // torchtune's chunked output runs the one head weight in 8 matmuls: a trained head's gradient
  // is summed in its AccumulateGrad's input buffer (input_buffer.cpp InputBuffer::accumulate,
  // in place into the first chunk's), beside each later chunk's new one until the add is done.
  const double head_grad_summed =
      run.loss == LossPath::chunked_output && head_trainable ? head_grad : 0.0;
  if (!no_logits)
    bwd = std::max(bwd, res.activations + loss_saved - loss_output_freed + db * V * T +
                            lf.logits_grad32 + h_out + head_grad + head_grad_summed + head_dequant);
  // The final norm's backward, between the head's and the top layer's: its output's gradient
  // and its own working set (RMSNorm's fp32 upcasts, pow and products) over what the forward
  // kept, the head's output and input already gone.
  {
    const auto final_walk = walk(fg, fg.prims.back().out, true, false);
    bwd = std::max(bwd, res.activations - h_out + head_grad_kept + std::get<0>(final_walk));
  }
  // Top layer: all activations (less the loss and what the final norm kept, which its backward
  // has released by then) + head grads + one layer's backward working set. Reentrant recompute:
  // the layer's saved set and its recomputed output exist again.
  const double below_final = res.activations - h_out - res.final_saved;
  const double ckpt_recompute = ckpt ? mid_own + h_out : 0;
  bwd = std::max(bwd, below_final + head_grad_kept + norm_grad_kept + ckpt_recompute + mid_peak);
  // Bottom layer: what layer 0 keeps + every layer's parameter gradients + its working set.
  const double all_layer_grads =
      run.grads_accumulated || run.grads_stepped ? 0.0 : mid_params * (L - 1) * run.grad_share;
  const double bottom_saved = ckpt ? layer_in + rope_bytes + mask_bytes + first_own + h_out
                                   : first_own + (first_saves_in ? layer_in : 0) + rope_bytes;
  // Without checkpointing the layers above still hold their ctx-kept inputs (reentrant
  // recompute graphs are local to each layer's backward, so checkpointed runs do not).
  const double held_above = ckpt ? 0 : (L - 1) * mid_held + (head_held ? h_out : 0);
  bwd = std::max(bwd, stem + bottom_saved + head_grad_kept + norm_grad_kept + all_layer_grads +
                          first_peak + held_above);
  if (ckpt) {
    // CheckpointFunction.backward reruns the layer's forward with grad enabled while the
    // gradient of its output waits: the recomputed graph's saved set and temporaries, top layer
    // (above what the layers below keep) and bottom layer (beside every layer's gradients).
    bwd = std::max(bwd, below_final + head_grad_kept + norm_grad_kept + h_out +
                            forward_peak(top.first, top.second, true, skip, T, run.dequant_copies));
    bwd = std::max(
        bwd, stem + layer_in + rope_bytes + mask_bytes + head_grad_kept + norm_grad_kept +
                 all_layer_grads + h_out +
                 forward_peak(first->first, first->second, true, skip, T, run.dequant_copies));
  }
  // The embedding's backward, last: aten::embedding_dense_backward (derivatives.yaml `embedding`,
  // ATen/native/Embedding.cpp) zero-fills a new V x h gradient in the weight's dtype while the
  // embedding output's gradient (T x h) is still its input, beside every other parameter's
  // gradient. Untied, that new tensor is the embedding's own .grad. Tied (tie_word_embeddings),
  // the head's gradient of the same weight has waited in the engine's input buffer since the
  // head's backward (head_grad above), so two V x h gradients are alive until
  // InputBuffer::accumulate adds the second into the first in place (torch >= 2.0
  // input_buffer.cpp `can_accumulate_inplace`: grad mode off, a dense buffered gradient held by
  // nothing else) and AccumulateGrad steals the sum.
  if (full) {
    const double layer_params =
        all_layer_grads + (run.grads_stepped ? 0.0 : first_params * run.grad_share);
    bwd = std::max(bwd, head_grad_kept + norm_grad_kept + layer_params + layer_in + V * d.h * db);
  }
  res.backward_peak_extra = bwd;
  return res;
}

std::string sim_run_key(const SimRun& r) {
  std::string k = fmt::format(
      "{} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {}",
      static_cast<int>(r.method), r.batch, r.seq, r.model_bytes, r.adapter_bytes, r.lora_rank,
      r.lora_dropout, r.all_linear, static_cast<int>(r.attn), static_cast<int>(r.loss),
      static_cast<int>(r.ckpt), r.bnb_saves_input, r.dropout_off, r.prev_graph_held, r.outputs_fp32,
      r.dequant_copies, r.fused_qkv_lora, r.grad_share, r.head_4bit, r.autocast_base_copies,
      r.lora_head, r.grads_accumulated, r.megatron_layer, r.unsloth_layer, r.nll_chunk, r.compiled,
      r.inputs_kept, r.inputs_kept_forward, r.grads_stepped, r.targets.size());
  if (r.whole_head) k += " whole_head";
  for (const auto& t : r.targets) k += "|" + t;
  return k;
}

}  // namespace sparkops::plan
