// The Builder's operators of the Hugging Face and Megatron-Core programs (declared, with what
// each keeps, in plan/autograd_sim_builder.hpp; Unsloth's in autograd_sim_unsloth.cpp).
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/text.hpp"
#include "plan/autograd_sim_builder.hpp"

namespace sparkops::plan::sim {

void Builder::save_output(int t) {
  if (g.tensors[t].rg) g.save(g.prims.back(), t);
}

int Builder::cast(int x, unsigned bytes) {
  if (g.tensors[x].bytes == bytes) return x;
  Prim p;
  p.inputs = {x};
  if (g.tensors[x].rg) p.grad_inputs = {x};
  p.out = g.fresh(g.tensors[x].elems, bytes, g.tensors[x].rg);
  return g.push(p);
}

int Builder::op(std::vector<int> ins, double elems, unsigned bytes, std::vector<int> saves,
                double extra, double param_grad, bool param_rg) {
  Prim p;
  p.inputs = ins;
  bool rg = param_rg;
  for (int t : ins) {
    if (g.tensors[t].rg) p.grad_inputs.push_back(t);
    rg = rg || g.tensors[t].rg;
  }
  if (rg)
    for (int t : saves) g.save(p, t);
  p.out = g.fresh(elems, bytes, rg);
  p.extra = rg ? extra : 0;
  p.param_grad = param_grad;
  return g.push(p);
}

int Builder::mul(int a, int b) {
  std::vector<int> saves;
  if (g.tensors[a].rg) saves.push_back(b);
  if (g.tensors[b].rg) saves.push_back(a);
  return op({a, b}, g.tensors[a].elems, db, saves);
}

std::vector<int> Builder::matmul_saves(int a, int b) {
  std::vector<int> saves;
  if (g.tensors[a].rg) saves.push_back(b);
  if (g.tensors[b].rg) saves.push_back(a);
  return saves;
}

int Builder::add(std::vector<int> ins) {
  Prim p;
  p.inputs = ins;
  bool rg = false;
  for (int t : ins) {
    if (g.tensors[t].rg) p.alias_inputs.push_back(t);
    rg = rg || g.tensors[t].rg;
  }
  p.out = g.fresh(g.tensors[ins[0]].elems, g.tensors[ins[0]].bytes, rg);
  return g.push(p);
}

int Builder::rmsnorm(int x, double rows, bool gemma) {
  const double n = g.tensors[x].elems;
  const bool wt = full();
  int x32 = cast(x, 4);
  int pw = op({x32}, n, 4, {x32}, 2 * n * 4);
  int mean = op({pw}, rows, 4, {});
  int eps = op({mean}, rows, 4, {});
  int rs = op({eps}, rows, 4, {});
  save_output(rs);
  int normed = op({x32, rs}, n, 4, {x32, rs}, n * 4);
  if (gemma) {
    // output * (1.0 + weight.float()): (1 + w) is a per-layer fp32 copy, saved; the normed
    // fp32 tensor is saved when the weight trains. Then type_as(x).
    Prim& last = g.prims.back();
    (void)last;
    int scaled = op({normed}, n, 4, wt ? std::vector<int>{normed} : std::vector<int>{},
                    wt ? n * 4 : 0, wt ? d.h * db : 0, wt);
    if (g.tensors[scaled].rg) {
      g.storages.push_back({0, d.h * 4});
      g.saved.insert(static_cast<int>(g.storages.size()) - 1);
      g.prims.back().saved.push_back(static_cast<int>(g.storages.size()) - 1);
    }
    return cast(scaled, db);
  }
  int nb = cast(normed, db);
  return op({nb}, n, db, wt ? std::vector<int>{nb} : std::vector<int>{}, wt ? n * db : 0,
            wt ? d.h * db : 0, wt);
}

int Builder::layernorm(int x) {
  const bool wt = full();
  const double n = g.tensors[x].elems;
  Prim p;
  p.inputs = {x};
  if (g.tensors[x].rg) p.grad_inputs = {x};
  const bool rg = g.tensors[x].rg || wt;
  if (rg) {
    g.save(p, x);
    int stats = g.fresh(2, 4, false);
    g.save(p, stats);
  }
  p.param_grad = wt ? 2 * d.h * db : 0;
  p.out = g.fresh(n, db, rg);
  return g.push(p);
}

Result<int> Builder::linear(int x, const std::string& name) {
  auto it = f.modules.find(name);
  if (it == f.modules.end())
    return fail(Errc::malformed, fmt::format("families.json {}: no module {}", f.name, name));
  const Module& m = it->second;
  auto din = eval_dim(m.d_in, d), dout = eval_dim(m.d_out, d);
  if (!din || !dout) return tl::unexpected(din ? dout.error() : din.error());
  const double scale = m.expert ? d.k : 1;  // elements per token through experts
  const double experts = m.expert ? d.E : 1;
  const double in_el = *din * scale, out_el = *dout * scale;
  const bool wt = full();
  int base;
  {
    Prim p;
    p.inputs = {x};
    if (g.tensors[x].rg) p.grad_inputs = {x};
    const bool save_in =
        wt || (run.method == TrainMethod::qlora && run.bnb_saves_input && g.tensors[x].rg);
    if (save_in) g.save(p, x);
    if (save_in && !wt) g.held.insert(g.tensors[x].storage);
    if (run.autocast_base_copies && !wt && run.method == TrainMethod::lora && g.tensors[x].rg) {
      g.storages.push_back({0, experts * *din * *dout * 2});
      const int copy = static_cast<int>(g.storages.size()) - 1;
      p.saved.push_back(copy);
      g.saved.insert(copy);
    }
    p.param_grad = wt ? experts * (*din * *dout + (m.bias ? *dout : 0)) * db : 0;
    // bitsandbytes dequantize_4bit allocates the full weight (quant_state.dtype), in forward
    // and again in backward (MatMul4Bit.backward: grad @ dequantized W); a .to(compute dtype)
    // of it is a second full copy while the first is still referenced.
    if (run.method == TrainMethod::qlora && g.tensors[x].rg)
      p.extra_abs = *din * *dout * db * std::max(1u, run.dequant_copies);
    p.out = g.fresh(out_el, db, g.tensors[x].rg || wt);
    // Every call dequantizes, whether or not a gradient flows (layer 0, a no_grad forward
    // under checkpointing); an expert's weight one at a time.
    if (run.method == TrainMethod::qlora)
      g.storages[g.tensors[p.out].storage].dequant = *din * *dout * db;
    base = g.push(p);
  }
  if (!targeted(name)) return base;
  // Until the wrapper returns the sum, the caller holds the adapted linear's input (the call's
  // argument) and PEFT lora.Linear.forward's local `x` its cast to the adapter dtype
  // (`x = self._cast_input_dtype(x, lora_A.weight.dtype)`), which dropout alone would free.
  struct HoldUntilReturn {
    Graph& g;
    std::vector<int> storages;
    ~HoldUntilReturn() {
      for (int s : storages) g.hold(s, static_cast<int>(g.prims.size()) - 1);
    }
  } hold{g, {g.tensors[x].storage}};
  // PEFT lora.Linear.forward: x.to(A.dtype); B(A(dropout(x))) * scaling; result + ...; .to()
  const unsigned ab = run.adapter_bytes;
  // LitGPT's LoRAQKVLinear adapts q, k and v of its fused projection from one
  // lora_dropout(x) (lora.py: F.linear(self.lora_dropout(x), self.lora_A)): one copy per input.
  const bool shared =
      run.fused_qkv_lora && (name == "q_proj" || name == "k_proj" || name == "v_proj");
  if (auto sd = shared_dropped.find(x); shared && sd != shared_dropped.end())
    return lora_tail(base, sd->second, out_el, experts, scale, *din, *dout);
  int xa = cast(x, ab);
  hold.storages.push_back(g.tensors[xa].storage);
  int dropped = xa;
  if (run.lora_dropout > 0) {
    Prim p;
    p.inputs = {xa};
    if (g.tensors[xa].rg) {
      p.grad_inputs = {xa};
      int maskt = g.fresh(in_el, 1, false);
      g.save(p, maskt);
    }
    p.out = g.fresh(in_el, ab, g.tensors[xa].rg);
    dropped = g.push(p);
  }
  if (shared) shared_dropped[x] = dropped;
  const int out = lora_tail(base, dropped, out_el, experts, scale, *din, *dout);
  if (shared) {
    // LoRAQKVLinear.zero_pad (lora.py at 43c44323, a509064d, 00af8b0d): unless q, k and v are
    // all adapted, lora_B's output over the adapted parts is scattered into a zero-filled
    // qkv-sized tensor by index_copy(_), whose backward (derivatives.yaml `index_copy`:
    // `grad.index_select(dim, index).expand_as(source)`) keeps that source: one tensor of the
    // adapted parts' widths per token, in the adapter dtype.
    double adapted = 0;
    bool all = true;
    for (const char* part : {"q_proj", "k_proj", "v_proj"}) {
      auto mt = f.modules.find(part);
      if (mt == f.modules.end() || !targeted(part)) {
        all = false;
        continue;
      }
      auto w = eval_dim(mt->second.d_out, d);
      if (!w) return tl::unexpected(w.error());
      adapted += *w;
    }
    if (!all) {
      g.storages.push_back({adapted * ab, 0});
      const int src = static_cast<int>(g.storages.size()) - 1;
      g.prims.back().saved.push_back(src);
      g.saved.insert(src);
    }
  }
  return out;
}

int Builder::lora_tail(int base, int dropped, double out_el, double experts, double scale,
                       double din, double dout) {
  const unsigned ab = run.adapter_bytes;
  const double r = d.r;
  int a;
  {
    Prim p;
    p.inputs = {dropped};
    if (g.tensors[dropped].rg) p.grad_inputs = {dropped};
    g.save(p, dropped);
    p.param_grad = experts * r * din * ab;
    p.out = g.fresh(r * scale, ab, true);
    a = g.push(p);
  }
  int bo;
  {
    Prim p;
    p.inputs = {a};
    p.grad_inputs = {a};
    g.save(p, a);
    p.param_grad = experts * r * dout * ab;
    p.out = g.fresh(out_el, ab, true);
    bo = g.push(p);
  }
  int scaled = op({bo}, out_el, ab, {});
  int sum = add({base, scaled});
  g.tensors[sum].bytes = std::max(db, ab);
  g.storages[g.tensors[sum].storage].per_token = out_el * std::max(db, ab);
  // A model-dtype base plus an fp32 adapter output promotes to fp32: AddBackward0 hands its
  // fp32 gradient on to the scaled output (the same tensor), and the engine's validate_outputs
  // (torch/csrc/autograd/engine.cpp) casts the base's copy of it to the base's dtype, a new
  // tensor.
  if (ab != db && g.tensors[base].rg) {
    Prim& p = g.prims.back();
    std::erase(p.alias_inputs, base);
    p.grad_inputs.push_back(base);
  }
  return cast(sum, db);
}

int Builder::rope(int x, bool partial) {
  const double n = g.tensors[x].elems;
  std::vector<int> saves;
  if (cos >= 0) saves = {cos, sin};
  const int out = op({x}, n, db, saves, 2 * n * db);
  const double nr = n * f.rotary_fraction;
  g.prims.back().fwd_extra = partial ? std::max(nr, 3 * nr - n) * db : 2 * n * db;
  return out;
}

int Builder::matmul_operand(int t) {
  const Storage& st = g.storages[g.tensors[t].storage];
  if (st.per_token > g.tensors[t].elems * g.tensors[t].bytes + 0.5)
    return op({t}, g.tensors[t].elems, db, {});
  return t;
}

int Builder::math_attention(int q, int k, int v) {
  const double qel = d.q;
  const double sc = d.heads * d.s;
  q = op({q}, qel, db, {});
  k = op({k}, g.tensors[k].elems, db, {});
  int w = op({q, k}, sc, db, matmul_saves(q, k));
  w = op({w}, sc, db, {});
  save_output(w);
  v = matmul_operand(v);
  int o = op({w, v}, qel, db, matmul_saves(w, v));
  return op({o}, qel, db, {});
}

void Builder::keep_fused_qkv(int v) {
  const bool v_view = d.kvh == d.heads || d.kvh == 1;
  if (!run.fused_qkv_lora || !v_view || !g.tensors[v].rg) return;
  g.storages.push_back({(d.q + d.kv) * db, 0});
  const int s = static_cast<int>(g.storages.size()) - 1;
  g.prims.back().saved.push_back(s);
  g.saved.insert(s);
}

int Builder::fused_attention(int q, int k, int v) {
  Prim p;
  p.inputs = {q, k, v};
  for (int t : {q, k, v})
    if (g.tensors[t].rg) p.grad_inputs.push_back(t);
  const bool rg = !p.grad_inputs.empty();
  p.out = g.fresh(d.q, db, rg);
  if (rg) {
    for (int t : {q, k, v}) g.save(p, t);
    int lse = g.fresh(d.heads, 4, false);
    g.save(p, lse);
    g.save(p, p.out);
  }
  return g.push(p);
}

int Builder::attention(int q, int k, int v) {
  const double qel = d.q;
  const bool gqa = d.kvh != d.heads;
  // LitGPT expands k and v to the query heads for training whatever the kernel (model.py:
  // "training: flash attention requires it"); its one-group v stays a view (keep_fused_qkv).
  if ((run.attn != AttnKernel::flash || run.fused_qkv_lora) && gqa) {
    k = op({k}, qel, db, {});  // repeat_kv: expand + reshape copies
    // (SDPA's math fallback copies the broadcast v in its matmul, view or not.)
    if (!(run.fused_qkv_lora && d.kvh == 1) || run.attn == AttnKernel::math)
      v = op({v}, qel, db, {});
  }
  if (run.attn == AttnKernel::math) return math_attention(q, k, v);
  if (run.attn != AttnKernel::eager) {
    const int out = fused_attention(q, k, v);
    keep_fused_qkv(v);
    return out;
  }
  // eager_attention_forward: matmul(q, k^T) saves q and k; * scaling; [softcap: / tanh *];
  // + mask; softmax(fp32) saves its output; .to(dtype); [dropout]; matmul(probs, v) saves both;
  // transpose(1, 2).contiguous() copies.
  const double sc = d.heads * d.s;
  q = matmul_operand(q);
  k = matmul_operand(k);
  v = matmul_operand(v);
  int w = op({q, k}, sc, db, matmul_saves(q, k));
  w = op({w}, sc, db, {});
  if (f.attn_softcap) {
    w = op({w}, sc, db, {});
    w = op({w}, sc, db, {});
    save_output(w);
    w = op({w}, sc, db, {});
  }
  w = add({w});
  // softmax(w, dtype=float32) on bf16 scores: ATen's softmax (native/SoftMax.cpp, torch 1.13
  // through 2.x) converts the input with toType(float) and runs _softmax on the copy (only a
  // CUDA Half input takes the fused half_to_float kernel), so autograd records the cast and the
  // fp32 softmax: in backward _softmax_backward_data makes the fp32 gradient of the scores
  // beside the fp32 gradient of the probabilities, and the cast's backward then narrows it.
  w = cast(w, 4);
  w = op({w}, sc, 4, {});
  save_output(w);
  w = cast(w, db);
  const double p_attn = run.dropout_off ? 0 : f.dropout;
  if (p_attn > 0) {
    int maskt = g.fresh(sc, 1, false);
    w = op({w}, sc, db, {maskt});
  }
  int o = op({w, v}, qel, db, matmul_saves(w, v));
  keep_fused_qkv(v);
  return op({o}, qel, db, {});
}

int Builder::te_rmsnorm(int x) {
  const bool wt = full();
  Prim p;
  p.inputs = {x};
  if (g.tensors[x].rg) p.grad_inputs = {x};
  const bool rg = g.tensors[x].rg || wt;
  if (rg) {
    g.save(p, x);
    g.save(p, g.fresh(1, 4, false));
  }
  p.param_grad = wt ? d.h * db : 0;
  p.out = g.fresh(g.tensors[x].elems, db, rg);
  return g.push(p);
}

Result<int> Builder::te_norm_linear(int x, const std::string& module) {
  const std::size_t at = g.prims.size();
  te_rmsnorm(x);
  auto out = linear(g.prims[at].out, module);
  if (!out) return out;
  const Tensor& gemm = g.tensors[g.prims[at + 1].out];
  if (g.tensors[g.prims[at].out].rg) g.prims[at].extra += gemm.elems * gemm.bytes;
  return out;
}

int Builder::dropout(int x) {
  const double p = run.dropout_off ? 0 : f.dropout;
  if (p <= 0) return x;
  int maskt = g.fresh(g.tensors[x].elems, 1, false);
  return op({x}, g.tensors[x].elems, db, {maskt});
}

Result<int> Builder::layer(int x) {
  std::map<std::string, int> env{{"x", x}};
  int last = x;
  for (const auto& ln : f.program) {
    const std::string& line = ln.text;
    const auto& outs = ln.outs;
    const auto& words = ln.words;
    const std::string& module = ln.module;
    if (outs.empty() || words.empty())
      return fail(Errc::malformed, fmt::format("families.json {}: \"{}\"", f.name, line));
    const std::string& o = words[0];
    std::vector<int> ins;
    for (std::size_t k = 1; k < words.size(); ++k) {
      if (o == "split") break;
      auto it = env.find(words[k]);
      if (it == env.end())
        return fail(Errc::malformed, fmt::format("families.json {}: \"{}\" uses undefined {}",
                                                 f.name, line, words[k]));
      ins.push_back(it->second);
    }
    int out = -1;
    if (o == "rmsnorm" || o == "gemma_rmsnorm") {
      out = rmsnorm(ins.at(0), 1, o == "gemma_rmsnorm");
    } else if (o == "head_rmsnorm" || o == "head_gemma_rmsnorm") {
      out = rmsnorm(ins.at(0), g.tensors[ins.at(0)].elems / d.hd, o == "head_gemma_rmsnorm");
    } else if (o == "layernorm") {
      out = layernorm(ins.at(0));
    } else if (o == "linear") {
      auto r = linear(ins.at(0), module);
      if (!r) return tl::unexpected(r.error());
      out = *r;
    } else if (o == "split") {
      auto it = env.find(words.at(1));
      if (it == env.end() || words.size() != outs.size() + 2)
        return fail(Errc::malformed, fmt::format("families.json {}: \"{}\"", f.name, line));
      for (std::size_t k = 0; k < outs.size(); ++k) {
        auto el = eval_dim(words[k + 2], d);
        if (!el) return tl::unexpected(el.error());
        env[outs[k]] = g.alias(it->second, *el);
        g.split_pieces[it->second].push_back(env[outs[k]]);
      }
      continue;
    } else if (o == "unsloth_rmsnorm" || o == "unsloth_head_rmsnorm") {
      const bool head = o == "unsloth_head_rmsnorm";
      out = unsloth_rmsnorm(ins.at(0), head ? g.tensors[ins.at(0)].elems / d.hd : 1);
    } else if (o == "unsloth_rope") {
      out = unsloth_rope(ins.at(0));
    } else if (o == "unsloth_attention") {
      out = unsloth_attention(ins.at(0), ins.at(1), ins.at(2));
    } else if (o == "lora_qkv") {
      auto r = lora_qkv(ins.at(0), ln.modules);
      if (!r) return tl::unexpected(r.error());
      if (r->size() != outs.size())
        return fail(Errc::malformed, fmt::format("families.json {}: \"{}\"", f.name, line));
      for (std::size_t k = 1; k < outs.size(); ++k) env[outs[k]] = (*r)[k];
      out = r->front();
    } else if (o == "lora_w") {
      auto r = lora_w(ins.at(0), module);
      if (!r) return tl::unexpected(r.error());
      out = *r;
    } else if (o == "lora_mlp") {
      auto r = lora_mlp(ins.at(0), ln.modules);
      if (!r) return tl::unexpected(r.error());
      out = *r;
    } else if (o == "te_rmsnorm") {
      out = te_rmsnorm(ins.at(0));
    } else if (o == "te_norm_linear") {
      auto r = te_norm_linear(ins.at(0), module);
      if (!r) return tl::unexpected(r.error());
      out = *r;
    } else if (o == "te_attention") {
      out = te_attention(ins.at(0), ins.at(1), ins.at(2));
    } else if (o == "te_fused_rope") {
      // TE FusedRoPEFunc (pytorch/attention/rope.py): ctx keeps only the shared freqs
      // (rope_shared "freqs_fp32"); forward and backward are one kernel each.
      out = op({ins.at(0)}, g.tensors[ins.at(0)].elems, db, {});
      g.keeps_freqs = g.keeps_freqs || g.tensors[out].rg;
    } else if (o == "mcore_rope") {
      // Megatron rope_utils _apply_rotary_pos_emb_bshd: cos_ and sin_ ([s, hd], the model
      // dtype) made per call and kept by the muls (t * cos_, _rotate_half(t) * sin_).
      const double n = g.tensors[ins.at(0)].elems;
      out = op({ins.at(0)}, n, db, {}, 2 * n * db);
      if (g.tensors[out].rg) {
        g.storages.push_back({0, 2 * d.s * d.hd * db});
        const int cs = static_cast<int>(g.storages.size()) - 1;
        g.prims.back().saved.push_back(cs);
        g.saved.insert(cs);
      }
    } else if (o == "contiguous") {
      out = add({ins.at(0)});  // a copy; its gradient passes through
    } else if (o == "swiglu") {
      // Megatron SwiGLUFunction: keeps its input (both halves), returns half of it.
      out = op({ins.at(0)}, g.tensors[ins.at(0)].elems / 2, db, {ins.at(0)});
    } else if (o == "rope" || o == "partial_rope") {
      out = rope(ins.at(0), o == "partial_rope");
    } else if (o == "attention") {
      out = attention(ins.at(0), ins.at(1), ins.at(2));
    } else if (o == "silu" || o == "gelu") {
      out = op({ins.at(0)}, g.tensors[ins.at(0)].elems, db, {ins.at(0)});
    } else if (o == "mul") {
      out = mul(ins.at(0), ins.at(1));
    } else if (o == "add") {
      out = add(ins);
    } else if (o == "dropout") {
      out = dropout(ins.at(0));
    } else if (o == "softmax_fp32") {
      out = op({ins.at(0)}, g.tensors[ins.at(0)].elems, 4, {});
      save_output(out);
    } else if (o == "gather") {
      out = op({ins.at(0)}, g.tensors[ins.at(0)].elems * d.k, db, {});
    } else if (o == "scatter_add") {
      out = op({ins.at(0)}, g.tensors[ins.at(0)].elems / d.k, db, {});
    } else {
      return fail(Errc::malformed, fmt::format("families.json {}: unknown op {}", f.name, o));
    }
    // An op's saves are taken when rg is known; "mul" saves the other operand only.
    env[outs[0]] = out;
    last = out;
  }
  for (const auto& [value, until] : f.held) {
    auto v = env.find(value), u = env.find(until);
    if (v == env.end() || u == env.end())
      return fail(Errc::malformed, fmt::format("families.json {}: held {} -> {}: no such value",
                                               f.name, value, until));
    for (std::size_t k = 0; k < g.prims.size(); ++k)
      if (g.prims[k].out == u->second) g.hold(g.tensors[v->second].storage, static_cast<int>(k));
  }
  return last;
}

}  // namespace sparkops::plan::sim
