// Unsloth's decoder layer as the activation model sees it (the unsloth_* programs of
// data/families.json): what its hand-written autograd Functions keep and allocate, read in
// unsloth 2026.8.19 and checked against tools/memtrace's port (memtrace/unsloth.py).
// docs/estimator.md ("Unsloth's own layer") lists the sources.
//
//   kernels/rms_layernorm.py Fast_RMS_Layernorm  keeps its input and an fp32 rstd per row; its
//                                                backward writes dX into dY (`dY.reshape`, a view:
//                                                every dY here arrives contiguous)
//   kernels/rope_embedding.py Fast_RoPE_Embedding_QK  TRL's collators pass position_ids, so q and
//                                                k, transposed views, are cloned (strides kept)
//                                                and rotated in place; nothing kept but the
//                                                model's cos/sin cache and the int32 ids
//   utils/attention_dispatch.py run_attention    flash-attn, xformers or SDPA (enable_gqa)
//   kernels/fast_lora.py LoRA_QKV, LoRA_W, LoRA_MLP  where models/llama.py patch_peft_model fuses
//                                                a group; kernels/utils.py matmul_lora, and
//                                                fast_dequantize's global buffers for 4-bit bases
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "plan/autograd_sim_builder.hpp"

namespace sparkops::plan::sim {

namespace {

// A module's (d_in, d_out) per token.
Result<std::pair<double, double>> module_dims(const Family& f, const Dims& d,
                                              const std::string& name) {
  auto it = f.modules.find(name);
  if (it == f.modules.end())
    return fail(Errc::malformed, fmt::format("families.json {}: no module {}", f.name, name));
  auto din = eval_dim(it->second.d_in, d), dout = eval_dim(it->second.d_out, d);
  if (!din || !dout) return tl::unexpected(din ? dout.error() : din.error());
  return std::make_pair(*din, *dout);
}

}  // namespace

int Builder::unsloth_rmsnorm(int x, double rows_per_token) {
  const Tensor in = g.tensors[x];
  Prim p;
  p.inputs = {x};
  if (in.rg) {
    g.save(p, x);
    g.save(p, g.fresh(rows_per_token, 4, false));  // r
    p.alias_inputs = {x};                          // dX = dY: the output's gradient itself
  }
  p.out = g.fresh(in.elems, db, in.rg);
  return g.push(p);
}

int Builder::unsloth_rope(int x) {
  const Tensor in = g.tensors[x];
  Prim p;
  p.inputs = {x};
  // `Q.clone()` of the transposed view keeps its strides (a new tensor of the same bytes), and
  // backward clones the gradient likewise before rotating it: a new gradient for x. One head
  // (a single kv head) is already contiguous, so it is rotated in place, forward and backward.
  if (in.elems <= d.hd) {
    p.out = g.alias(x, in.elems);
    if (in.rg) p.alias_inputs = {x};
    return g.push(p);
  }
  if (in.rg) p.grad_inputs = {x};
  p.out = g.fresh(in.elems, db, in.rg);
  return g.push(p);
}

int Builder::unsloth_attention(int q, int k, int v) {
  // select_attention_backend: flash-attn's dense kernel where installed (GQA native), else
  // xformers (k and v expanded and reshaped to the query heads when a backward follows: copies,
  // as HF's repeat_kv makes, which attention() counts), else SDPA with enable_gqa=True (torch >=
  // 2.5: SDPA_HAS_GQA) in training, which copies nothing either; eager and math stay HF's rules.
  // One kv head expands with stride 0 and reshapes as a view: no copy under xformers either.
  if (run.attn == AttnKernel::flash || run.attn == AttnKernel::sdpa ||
      (run.attn == AttnKernel::xformers && d.kvh == 1))
    return fused_attention(q, k, v);
  return attention(q, k, v);
}

// matmul_lora(X, W, W_quant, A, B, s) in forward: out = X @ W.t() (a 4-bit W dequantized into
// the global buffer: nothing allocated), then XA = X @ A.to(dtype) and out.addmm_(XA,
// B.to(dtype)): above the output, XA beside one adapter's model-dtype copy.
static std::vector<Moment> matmul_lora_moments(double din, double dout, double r, unsigned db,
                                               unsigned ab) {
  const double copy = ab != db ? 1.0 : 0.0;
  return {{r * db, copy * r * din * db}, {r * db, copy * r * dout * db}};
}

// A fused Function's backward, above the walk's live set and its new input gradient: the
// adapters' model-dtype copies (`A.to(dtype)`, when they are fp32) and their model-dtype
// gradients (`torch.empty_like`) through the whole formula, one token-by-rank temporary at a
// time (`dY @ B.t()`, `A.t() @ X.t()`), and for a 4-bit base one weight dequantized outside the
// global buffer (fast_dequantize(W.t(), W_quant): the weight plus its fp32 absmax, n / 64
// elements); autograd's validate_outputs then casts each gradient to the fp32 parameter's dtype.
// The walk adds the fp32 gradients (param_grad) to every moment, so the formula's own moments
// take them back out.
static std::vector<Moment> fused_backward_moments(double adapter_elems, double last_grad_elems,
                                                  double per_token, double dequant, double r,
                                                  unsigned db, unsigned ab, double param_grad) {
  const double copies = ab != db ? adapter_elems * db : 0;
  const double grads = adapter_elems * db;
  // The engine casts the returned gradients in output order, each new fp32 tensor made before
  // its model-dtype one goes: the largest moment is the last cast (every fp32 gradient and the
  // last model-dtype one). Only with fp32 adapters.
  const double casting = ab != db ? last_grad_elems * db : 0;
  std::vector<Moment> m = {{per_token + r * db, copies - param_grad},
                           {per_token + r * db, copies + grads - param_grad},
                           {0, casting}};
  if (dequant > 0)
    m.push_back({per_token, copies + grads - param_grad + dequant * db + dequant / 64 * 4});
  return m;
}

Result<std::vector<int>> Builder::lora_qkv(int x, const std::vector<std::string>& modules) {
  if (modules.size() != 3)
    return fail(Errc::malformed, fmt::format("families.json {}: lora_qkv needs 3 modules", f.name));
  std::vector<int> outs;
  if (!unsloth_fuses(f, run, modules)) {
    // LlamaAttention_fast_forward's original_apply_qkv: the PEFT projections one by one.
    for (const auto& m : modules) {
      auto o = linear(x, m);
      if (!o) return tl::unexpected(o.error());
      outs.push_back(*o);
    }
    return outs;
  }
  const unsigned ab = run.adapter_bytes;
  const bool qlora = run.method == TrainMethod::qlora;
  double adapter_elems = 0, dequant = 0;
  for (std::size_t k = 0; k < modules.size(); ++k) {
    auto dims = module_dims(f, d, modules[k]);
    if (!dims) return tl::unexpected(dims.error());
    const auto [din, dout] = *dims;
    adapter_elems += d.r * (din + dout);
    if (qlora) dequant = std::max(dequant, din * dout);
    Prim p;
    p.inputs = {x};
    p.out = g.fresh(dout, db, true);  // Q, K, V: three outputs of one Function
    p.fwd_moments = matmul_lora_moments(din, dout, d.r, db, ab);
    // The Function's backward (run once all three gradients have arrived) sits on the last
    // output's primitive, which the reverse walk reaches first: it keeps X and writes dX into
    // it (`torch.matmul(dQ, QW.t(), out = X)`, inplace=True).
    if (k + 1 == modules.size()) {
      g.save(p, x);
      if (g.tensors[x].rg) {
        p.grad_inputs = {x};
        p.grad_into_saved = g.tensors[x].storage;
      }
      p.param_grad = adapter_elems * ab;
      p.bwd_moments =
          fused_backward_moments(adapter_elems, d.r * dout, 0, dequant, d.r, db, ab, p.param_grad);
    }
    outs.push_back(g.push(p));
  }
  return outs;
}

Result<int> Builder::lora_w(int x, const std::string& module) {
  if (!unsloth_fuses(f, run, {module})) return linear(x, module);
  auto dims = module_dims(f, d, module);
  if (!dims) return tl::unexpected(dims.error());
  const auto [din, dout] = *dims;
  const unsigned ab = run.adapter_bytes;
  Prim p;
  p.inputs = {x};
  g.save(p, x);
  // dX = dY @ W.t(): a new gradient (not written into X).
  if (g.tensors[x].rg) p.grad_inputs = {x};
  p.out = g.fresh(dout, db, true);
  p.fwd_moments = matmul_lora_moments(din, dout, d.r, db, ab);
  const double adapter_elems = d.r * (din + dout);
  p.param_grad = adapter_elems * ab;
  const double dequant = run.method == TrainMethod::qlora ? din * dout : 0;
  p.bwd_moments =
      fused_backward_moments(adapter_elems, d.r * dout, 0, dequant, d.r, db, ab, p.param_grad);
  return g.push(p);
}

Result<int> Builder::lora_mlp(int x, const std::vector<std::string>& modules) {
  if (modules.size() != 3)
    return fail(Errc::malformed, fmt::format("families.json {}: lora_mlp needs 3 modules", f.name));
  if (!unsloth_fuses(f, run, modules)) {
    // The HF MLP on the PEFT projections: down(silu(gate(x)) * up(x)).
    auto gate = linear(x, modules[0]);
    if (!gate) return gate;
    const int act = op({*gate}, g.tensors[*gate].elems, db, {*gate});
    auto up = linear(x, modules[1]);
    if (!up) return up;
    const int m = mul(act, *up);
    return linear(m, modules[2]);
  }
  const unsigned ab = run.adapter_bytes;
  double adapter_elems = 0;
  std::vector<std::pair<double, double>> dims;
  for (const auto& m : modules) {
    auto md = module_dims(f, d, m);
    if (!md) return tl::unexpected(md.error());
    dims.push_back(*md);
    adapter_elems += d.r * (md->first + md->second);
  }
  // e = matmul_lora(X, gate), g = matmul_lora(X, up), h = swiglu_fg_kernel(e, g) (new),
  // i = matmul_lora(h, down); ctx keeps X, e and g (h dies when the Function returns).
  auto proj = [&](int in, std::pair<double, double> md) {
    Prim p;
    p.inputs = {in};
    p.out = g.fresh(md.second, db, true);
    p.fwd_moments = matmul_lora_moments(md.first, md.second, d.r, db, ab);
    return g.push(p);
  };
  const int e = proj(x, dims[0]);
  const int gg = proj(x, dims[1]);
  Prim hp;
  hp.inputs = {e, gg};
  hp.out = g.fresh(dims[0].second, db, true);
  const int h = g.push(hp);
  Prim p;
  p.inputs = {h};
  for (int t : {x, e, gg}) g.save(p, t);
  if (g.tensors[x].rg) {
    p.grad_inputs = {x};
    p.grad_into_saved = g.tensors[x].storage;  // dX = matmul(df, upW.t(), out = X)
  }
  p.out = g.fresh(dims[2].second, db, true);
  p.fwd_moments = matmul_lora_moments(dims[2].first, dims[2].second, d.r, db, ab);
  p.param_grad = adapter_elems * ab;
  // Backward: DW = matmul_lora(dY, downW.t(), ...) (a new token-by-i tensor through the global
  // buffer) beside the adapters' copies and gradients; SwiGLU's backward works in place on DW,
  // e and g; then up's and gate's weights are dequantized outside the global buffer in turn.
  const double inter = dims[0].second;
  const double dequant = run.method == TrainMethod::qlora ? dims[1].first * dims[1].second : 0;
  p.bwd_moments = fused_backward_moments(adapter_elems, d.r * dims[2].second, inter * db, dequant,
                                         d.r, db, ab, p.param_grad);
  return g.push(p);
}

}  // namespace sparkops::plan::sim
