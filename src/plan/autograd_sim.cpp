#include "plan/autograd_sim.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/text.hpp"

namespace sparkops::embedded {
extern const std::string_view families_json;
}

namespace sparkops::plan {

namespace {

using models::Architecture;

// ---- the families data ------------------------------------------------------------------------

struct Module {
  std::string d_in, d_out;
  bool bias = false;
  bool expert = false;
};
// One program line, parsed once when the data is loaded: "outs = op args @module".
struct Line {
  std::string text;
  std::vector<std::string> outs, words;  // words[0] is the op
  std::string module;
};

struct Family {
  std::string name;
  std::vector<Line> program;
  std::string norm;
  std::map<std::string, Module> modules;
  std::vector<std::string> layer;
  double rotary_fraction = 1.0;
  bool embed_scale = false, attn_softcap = false, final_softcap = false, learned_positions = false;
  double dropout = 0.0;
};

struct Families {
  std::map<std::string, Family> by_name;
  std::map<std::string, std::string> alias;
  std::string error;
};

const Families& families() {
  static const Families f = [] {
    Families out;
    const auto j = nlohmann::json::parse(embedded::families_json, nullptr, false);
    if (j.is_discarded() || !j.contains("families")) {
      out.error = "families.json: not JSON";
      return out;
    }
    const auto& fams = j["families"];
    auto load = [&](const std::string& name, const nlohmann::json& e, auto& self) -> Family {
      Family fam;
      if (e.contains("like"))
        fam = self(e["like"].get<std::string>(), fams[e["like"].get<std::string>()], self);
      fam.name = name;
      fam.norm = e.value("norm", fam.norm);
      if (e.contains("modules")) {
        fam.modules.clear();
        for (const auto& [m, dims] : e["modules"].items())
          fam.modules[m] = Module{dims[0], dims[1]};
      }
      if (e.contains("layer")) fam.layer = e["layer"].get<std::vector<std::string>>();
      for (const auto& b : e.value("bias", std::vector<std::string>{})) fam.modules[b].bias = true;
      for (const auto& b : e.value("expert_modules", std::vector<std::string>{}))
        fam.modules[b].expert = true;
      fam.rotary_fraction = e.value("rotary_fraction", fam.rotary_fraction);
      fam.embed_scale = e.value("embed_scale", fam.embed_scale);
      fam.attn_softcap = e.value("attn_softcap", fam.attn_softcap);
      fam.final_softcap = e.value("final_softcap", fam.final_softcap);
      fam.learned_positions = e.value("learned_positions", fam.learned_positions);
      fam.dropout = e.value("dropout", fam.dropout);
      return fam;
    };
    for (const auto& [name, e] : fams.items()) {
      out.by_name[name] = load(name, e, load);
      for (const auto& text : out.by_name[name].layer) {
        Line ln;
        ln.text = text;
        const auto eq = text.find('=');
        if (eq != std::string::npos) {
          const std::string lhs = text.substr(0, eq), rhs = text.substr(eq + 1);
          for (const auto& w : split(lhs, ' '))
            if (!trim(w).empty()) ln.outs.emplace_back(trim(w));
          for (const auto& w : split(rhs, ' ')) {
            const std::string_view t = trim(w);
            if (t.empty()) continue;
            if (t[0] == '@')
              ln.module = std::string(t.substr(1));
            else
              ln.words.emplace_back(t);
          }
        }
        out.by_name[name].program.push_back(std::move(ln));
      }
      for (const auto& a : e.value("aliases", std::vector<std::string>{})) out.alias[a] = name;
    }
    return out;
  }();
  return f;
}

// ---- tensors ----------------------------------------------------------------------------------

struct Storage {
  double per_token = 0;  // bytes per token
  double absolute = 0;   // bytes independent of tokens (per-layer parameter copies)
};
struct Tensor {
  int storage = -1;
  double elems = 0;  // per token
  unsigned bytes = 2;
  bool rg = false;
};

// One primitive as backward sees it.
struct Prim {
  std::vector<int> grad_inputs;   // tensors that receive a new gradient
  std::vector<int> alias_inputs;  // tensors whose gradient is the output gradient itself
  int out = -1;
  std::vector<int> saved;  // storages
  double param_grad = 0;   // bytes (absolute) of parameter gradients produced
  double extra = 0;        // per-token bytes of temporaries inside the backward formula
  double extra_abs = 0;    // bytes independent of tokens (a dequantized NF4 weight)
};

struct Graph {
  std::vector<Storage> storages;
  std::vector<Tensor> tensors;
  std::vector<Prim> prims;
  std::set<int> saved;  // storages saved by some prim
  std::set<int> held;   // saved as a ctx attribute: released with the graph, not by backward

  int fresh(double elems, unsigned bytes, bool rg) {
    storages.push_back({elems * bytes, 0});
    tensors.push_back({static_cast<int>(storages.size()) - 1, elems, bytes, rg});
    return static_cast<int>(tensors.size()) - 1;
  }
  int alias(int t, double elems) {
    Tensor v = tensors[t];
    v.elems = elems;
    tensors.push_back(v);
    return static_cast<int>(tensors.size()) - 1;
  }
  void save(Prim& p, int t) {
    p.saved.push_back(tensors[t].storage);
    saved.insert(tensors[t].storage);
  }
  int push(Prim p) {
    prims.push_back(std::move(p));
    return prims.back().out;
  }
};

struct Dims {
  double h, q, kv, i, hd, heads, kvh, k, E, s, V, r;
};

Result<double> eval_dim(std::string_view e, const Dims& d) {
  double total = 0;
  for (const auto& term : split(e, '+')) {
    double v = 1;
    for (const auto& f : split(term, '*')) {
      const std::string_view x = trim(f);
      if (x == "h")
        v *= d.h;
      else if (x == "q")
        v *= d.q;
      else if (x == "kv")
        v *= d.kv;
      else if (x == "i")
        v *= d.i;
      else if (x == "E")
        v *= d.E;
      else if (!x.empty() &&
               std::all_of(x.begin(), x.end(), [](char c) { return c >= '0' && c <= '9'; }))
        v *= std::stod(std::string(x));
      else
        return fail(Errc::malformed, fmt::format("families.json: unknown size \"{}\"", x));
    }
    total += v;
  }
  return total;
}

// PEFT matches a target against the module name or its last component ("c_proj" adapts both
// GPT-2 c_proj maps).
bool is_targeted(const SimRun& run, const std::string& module) {
  if (run.method == TrainMethod::full) return false;
  if (run.all_linear) return true;
  const std::string last = module.substr(module.rfind('.') + 1);
  return std::find(run.targets.begin(), run.targets.end(), module) != run.targets.end() ||
         std::find(run.targets.begin(), run.targets.end(), last) != run.targets.end();
}

// ---- building one step ------------------------------------------------------------------------

struct Builder {
  const Family& f;
  const SimRun& run;
  const Dims& d;
  Graph& g;
  unsigned db;  // model dtype bytes
  int cos = -1, sin = -1, mask = -1;
  std::map<int, int> shared_dropped = {};  // layer input -> its one LoRA dropout (fused_qkv_lora)
  bool full() const { return run.method == TrainMethod::full; }

  bool targeted(const std::string& module) const { return is_targeted(run, module); }

  // tanh, softmax, rsqrt: backward needs the op's own result (only when a grad flows).
  void save_output(int t) {
    if (g.tensors[t].rg) g.save(g.prims.back(), t);
  }
  int cast(int x, unsigned bytes) {
    if (g.tensors[x].bytes == bytes) return x;
    Prim p;
    if (g.tensors[x].rg) p.grad_inputs = {x};
    p.out = g.fresh(g.tensors[x].elems, bytes, g.tensors[x].rg);
    return g.push(p);
  }
  // Element-wise op producing a fresh tensor; `saves` are tensors kept for backward.
  int op(std::vector<int> ins, double elems, unsigned bytes, std::vector<int> saves,
         double extra = 0, double param_grad = 0, bool param_rg = false) {
    Prim p;
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
  // mul.Tensor: grad_a = grad * b (b saved when a requires grad), grad_b = grad * a.
  int mul(int a, int b) {
    std::vector<int> saves;
    if (g.tensors[a].rg) saves.push_back(b);
    if (g.tensors[b].rg) saves.push_back(a);
    return op({a, b}, g.tensors[a].elems, db, saves);
  }
  std::vector<int> matmul_saves(int a, int b) {
    std::vector<int> saves;
    if (g.tensors[a].rg) saves.push_back(b);
    if (g.tensors[b].rg) saves.push_back(a);
    return saves;
  }
  int add(std::vector<int> ins) {
    Prim p;
    bool rg = false;
    for (int t : ins) {
      if (g.tensors[t].rg) p.alias_inputs.push_back(t);
      rg = rg || g.tensors[t].rg;
    }
    p.out = g.fresh(g.tensors[ins[0]].elems, g.tensors[ins[0]].bytes, rg);
    return g.push(p);
  }
  // LlamaRMSNorm: x.float(); pow(2) saves x32; mean; +eps; rsqrt saves its result; x32 * rs
  // saves both; .to(dtype); weight * that saves it when the weight trains.
  int rmsnorm(int x, double rows, bool gemma) {
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
  // native_layer_norm saves input, mean and rstd (fp32 on CUDA) when anything needs a grad.
  int layernorm(int x) {
    const bool wt = full();
    const double n = g.tensors[x].elems;
    Prim p;
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
  Result<int> linear(int x, const std::string& name) {
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
      if (g.tensors[x].rg) p.grad_inputs = {x};
      const bool save_in =
          wt || (run.method == TrainMethod::qlora && run.bnb_saves_input && g.tensors[x].rg);
      if (save_in) g.save(p, x);
      if (save_in && !wt) g.held.insert(g.tensors[x].storage);
      p.param_grad = wt ? experts * (*din * *dout + (m.bias ? *dout : 0)) * db : 0;
      // bitsandbytes dequantize_4bit allocates the full weight (quant_state.dtype), in forward
      // and again in backward (MatMul4Bit.backward: grad @ dequantized W); a .to(compute dtype)
      // of it is a second full copy while the first is still referenced.
      if (run.method == TrainMethod::qlora && g.tensors[x].rg)
        p.extra_abs = *din * *dout * db * std::max(1u, run.dequant_copies);
      p.out = g.fresh(out_el, db, g.tensors[x].rg || wt);
      base = g.push(p);
    }
    if (!targeted(name)) return base;
    // PEFT lora.Linear.forward: x.to(A.dtype); B(A(dropout(x))) * scaling; result + ...; .to()
    const unsigned ab = run.adapter_bytes;
    // LitGPT's LoRAQKVLinear adapts q, k and v of its fused projection from one
    // lora_dropout(x) (lora.py: F.linear(self.lora_dropout(x), self.lora_A)): one copy per input.
    const bool shared =
        run.fused_qkv_lora && (name == "q_proj" || name == "k_proj" || name == "v_proj");
    if (auto sd = shared_dropped.find(x); shared && sd != shared_dropped.end())
      return lora_tail(base, sd->second, out_el, experts, scale, *din, *dout);
    int xa = cast(x, ab);
    int dropped = xa;
    if (run.lora_dropout > 0) {
      Prim p;
      if (g.tensors[xa].rg) {
        p.grad_inputs = {xa};
        int maskt = g.fresh(in_el, 1, false);
        g.save(p, maskt);
      }
      p.out = g.fresh(in_el, ab, g.tensors[xa].rg);
      dropped = g.push(p);
    }
    if (shared) shared_dropped[x] = dropped;
    return lora_tail(base, dropped, out_el, experts, scale, *din, *dout);
  }
  // lora_B(lora_A(dropped)) * scaling added to the base output, cast back to the model dtype.
  int lora_tail(int base, int dropped, double out_el, double experts, double scale, double din,
                double dout) {
    const unsigned ab = run.adapter_bytes;
    const double r = d.r;
    int a;
    {
      Prim p;
      if (g.tensors[dropped].rg) p.grad_inputs = {dropped};
      g.save(p, dropped);
      p.param_grad = experts * r * din * ab;
      p.out = g.fresh(r * scale, ab, true);
      a = g.push(p);
    }
    int bo;
    {
      Prim p;
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
    return cast(sum, db);
  }
  int rope(int x, bool partial) {
    const double n = g.tensors[x].elems;
    std::vector<int> saves;
    if (cos >= 0) saves = {cos, sin};
    (void)partial;
    return op({x}, n, db, saves, 2 * n * db);
  }
  int attention(int q, int k, int v) {
    const double qel = d.q;
    const bool gqa = d.kvh != d.heads;
    if (run.attn != AttnKernel::flash && gqa) {
      k = op({k}, qel, db, {});  // repeat_kv: expand + reshape copies
      v = op({v}, qel, db, {});
    }
    if (run.attn != AttnKernel::eager) {
      Prim p;
      for (int t : {q, k, v})
        if (g.tensors[t].rg) p.grad_inputs.push_back(t);
      const bool rg = !p.grad_inputs.empty();
      p.out = g.fresh(qel, db, rg);
      if (rg) {
        for (int t : {q, k, v}) g.save(p, t);
        int lse = g.fresh(d.heads, 4, false);
        g.save(p, lse);
        g.save(p, p.out);
      }
      return g.push(p);
    }
    // eager_attention_forward: matmul(q, k^T) saves q and k; * scaling; [softcap: / tanh *];
    // + mask; softmax(fp32) saves its output; .to(dtype); [dropout]; matmul(probs, v) saves both;
    // transpose(1, 2).contiguous() copies.
    const double sc = d.heads * d.s;
    // matmul reshapes a head-strided view of a fused projection (b, h, s, d over (b, s, 3, h, d))
    // into (b*h, s, d): not viewable, so it copies, and bmm saves the copy, not the projection.
    auto contiguous = [&](int t) {
      const Storage& st = g.storages[g.tensors[t].storage];
      if (st.per_token > g.tensors[t].elems * g.tensors[t].bytes + 0.5)
        return op({t}, g.tensors[t].elems, db, {});
      return t;
    };
    q = contiguous(q);
    k = contiguous(k);
    v = contiguous(v);
    int w = op({q, k}, sc, db, matmul_saves(q, k));
    w = op({w}, sc, db, {});
    if (f.attn_softcap) {
      w = op({w}, sc, db, {});
      w = op({w}, sc, db, {});
      save_output(w);
      w = op({w}, sc, db, {});
    }
    w = add({w});
    w = op({w}, sc, 4, {});
    save_output(w);
    w = cast(w, db);
    const double p_attn = run.dropout_off ? 0 : f.dropout;
    if (p_attn > 0) {
      int maskt = g.fresh(sc, 1, false);
      w = op({w}, sc, db, {maskt});
    }
    int o = op({w, v}, qel, db, matmul_saves(w, v));
    return op({o}, qel, db, {});
  }
  int dropout(int x) {
    const double p = run.dropout_off ? 0 : f.dropout;
    if (p <= 0) return x;
    int maskt = g.fresh(g.tensors[x].elems, 1, false);
    return op({x}, g.tensors[x].elems, db, {maskt});
  }

  // Runs the layer program on input x; returns the output tensor.
  Result<int> layer(int x) {
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
        }
        continue;
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
    return last;
  }
};

double saved_bytes(const Graph& g, const std::set<int>& ids, double tokens) {
  double b = 0;
  for (int s : ids) b += g.storages[s].per_token * tokens + g.storages[s].absolute;
  return b;
}

}  // namespace

std::string_view family_for(std::string_view model_type, bool* known) {
  const auto& fs = families();
  const std::string key(model_type);
  if (fs.by_name.count(key)) {
    *known = true;
    return fs.by_name.find(key)->first;
  }
  if (auto it = fs.alias.find(key); it != fs.alias.end()) {
    *known = true;
    return it->second;
  }
  *known = false;
  return "llama";
}

// The graphs of one step (stem, a middle layer, layer 0, the final norm): per-token sizes, so
// they depend on the model's dimensions and the run's structure but not on the token count
// (except eager attention, whose scores scale with the sequence). Built once per such key and
// cached: the bisecting advice and the fit matrix re-plan the same shape at many batch sizes.
struct StepGraphs {
  Graph stem;
  std::set<int> stem_saved;
  bool has_rope = false;
  bool x_rg = false;
  std::pair<Graph, int> mid, first;
  Graph fg;
};

std::string graph_key(const Family& f, const SimRun& run, const Dims& d, unsigned db) {
  std::string k = fmt::format(
      "{}|{} {} {} {} {} {} {} {}|{} {} {} {} {}|{} {} {} {} {} {} {} {}", f.name, d.h, d.hd,
      d.heads, d.kvh, d.i, d.k, d.E, run.attn == AttnKernel::eager ? d.s : 0.0,
      static_cast<int>(run.method), db, run.adapter_bytes, d.r, run.lora_dropout > 0,
      run.all_linear, static_cast<int>(run.attn), static_cast<int>(run.ckpt), run.bnb_saves_input,
      run.dropout_off, run.fused_qkv_lora, run.dequant_copies, run.targets.size());
  for (const auto& t : run.targets) k += "|" + t;
  return k;
}

Result<std::shared_ptr<const StepGraphs>> step_graphs(const Family& f, const SimRun& run,
                                                      const Dims& d, unsigned db) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const StepGraphs>> cache;
  const std::string key = graph_key(f, run, d, db);
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  const bool full = run.method == TrainMethod::full;
  const bool ckpt = run.ckpt == Checkpointing::per_layer;
  auto out = std::make_shared<StepGraphs>();
  // Stem: embedding (+ scale, + positions, dropout) and the shared rotary cos/sin, causal mask.
  Graph& g = out->stem;
  Builder bld{f, run, d, g, db};
  int x = g.fresh(d.h, db, full || ckpt);  // enable_input_require_grads under checkpointing
  if (f.embed_scale) x = bld.op({x}, d.h, db, {});
  if (f.learned_positions) {
    x = bld.add({x});
    x = bld.dropout(x);
  }
  if (f.rotary_fraction > 0) {
    bld.cos = g.fresh(d.hd * f.rotary_fraction, db, false);
    bld.sin = g.fresh(d.hd * f.rotary_fraction, db, false);
  }
  if (run.attn == AttnKernel::eager) bld.mask = g.fresh(d.s, db, false);
  out->stem_saved = g.saved;
  out->has_rope = bld.cos >= 0;

  // One layer, built on a stand-in input that requires grad as layer l > 0 inputs do; layer 0
  // differs only when its input does not require grad (LoRA without checkpointing), built apart.
  auto build_layer = [&](bool input_rg) -> Result<std::pair<Graph, int>> {
    Graph lg;
    Builder lb{f, run, d, lg, db};
    int in = lg.fresh(d.h, db, input_rg);
    if (bld.cos >= 0) {
      lb.cos = lg.fresh(d.hd * f.rotary_fraction, db, false);
      lb.sin = lg.fresh(d.hd * f.rotary_fraction, db, false);
    }
    auto layer_out = lb.layer(in);
    if (!layer_out) return tl::unexpected(layer_out.error());
    return std::make_pair(std::move(lg), *layer_out);
  };
  const bool x_rg = g.tensors[x].rg;
  auto mid = build_layer(true);
  if (!mid) return tl::unexpected(mid.error());
  auto first = build_layer(x_rg);
  if (!first) return tl::unexpected(first.error());
  out->x_rg = x_rg;
  out->mid = std::move(*mid);
  out->first = std::move(*first);
  Builder fb{f, run, d, out->fg, db};
  int last = out->fg.fresh(d.h, db, true);
  if (f.norm == "layernorm")
    fb.layernorm(last);
  else
    fb.rmsnorm(last, 1, f.norm == "gemma_rmsnorm");
  std::lock_guard<std::mutex> lock(mu);
  if (cache.size() > 256) cache.clear();  // bounded: a long-running caller plans many shapes
  return cache.emplace(key, std::move(out)).first->second;
}

Result<SimResult> simulate_step(const Architecture& a, const SimRun& run) {
  const auto& fs = families();
  if (!fs.error.empty()) return fail(Errc::malformed, fs.error);
  SimResult res;
  res.family = std::string(family_for(a.family, &res.family_known));
  const Family& f = fs.by_name.at(res.family);
  const double T = static_cast<double>(run.batch) * static_cast<double>(run.seq);
  const unsigned db = run.model_bytes;
  Dims d{};
  d.h = static_cast<double>(a.hidden);
  d.hd = static_cast<double>(a.head_dim);
  d.heads = static_cast<double>(a.heads);
  d.kvh = static_cast<double>(a.kv_heads);
  d.q = d.heads * d.hd;
  d.kv = d.kvh * d.hd;
  d.i = static_cast<double>(a.intermediate);
  d.k = static_cast<double>(std::max<std::uint64_t>(a.experts_per_token, 1));
  d.E = static_cast<double>(std::max<std::uint64_t>(a.experts, 1));
  d.s = static_cast<double>(run.seq);
  d.V = static_cast<double>(a.vocab);
  d.r = static_cast<double>(run.lora_rank);
  const bool full = run.method == TrainMethod::full;
  const bool ckpt = run.ckpt == Checkpointing::per_layer;
  res.inputs = 16 * T;

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
  const bool mid_saves_in = mid->first.saved.count(0) > 0;
  const bool first_saves_in = first->first.saved.count(0) > 0;
  const double rope_bytes = has_rope ? 2 * d.hd * f.rotary_fraction * db * T : 0;
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
  if (ckpt && !full) {
    res.leaf_grad = d.h * db * T;
    if (f.embed_scale || f.learned_positions) stem += d.h * db * T;
  }

  double acts = stem + h_out + final_own;
  if (!ckpt) {
    acts += first_own + (L - 1) * mid_own;
    acts += (first_saves_in ? layer_in : 0) + (L - 1) * (mid_saves_in ? layer_in : 0);
    acts += final_saves_in ? layer_in : 0;
    if (uses_rope(mid->first) || uses_rope(first->first)) acts += rope_bytes;
  } else {
    // Reentrant checkpoint per layer: each layer's inputs (hidden, cos, sin, mask) are saved.
    acts += L * layer_in + rope_bytes + mask_bytes;
    acts += final_saves_in ? layer_in : 0;
  }
  res.activations = acts;

  // ---- loss ----
  const double V = d.V;
  const bool head_trainable = full;
  double loss_saved = 0, fwd_extra = 0, loss_bwd = 0;
  switch (run.loss) {
    case LossPath::hf:
      // log_softmax output (fp32) and the shifted int64 target kept by nll_loss; the bf16
      // logits (and soft-capped copies) are transient; tanh keeps its output (Gemma-2).
      loss_saved = 4 * V * T + 8 * T + (f.final_softcap ? db * V * T : 0);
      fwd_extra = 8 * V * T + 8 * T + (f.final_softcap ? db * V * T : 0);
      // log_softmax_backward: saved output + incoming grad + grad input, all fp32.
      loss_bwd = 12 * V * T + 8 * T + (f.final_softcap ? db * V * T : 0);
      break;
    case LossPath::chunked:
      loss_saved = db * V * T + 8 * T;
      fwd_extra = 2 * db * V * T + 8 * T;
      // nll_loss grad and log_softmax grad-input of one 128-token chunk at a time (model dtype).
      loss_bwd =
          db * V * T + 8 * T + 2 * db * V * std::min(T, 128.0 * static_cast<double>(run.batch));
      break;
    case LossPath::fused: {
      // grad_input (model dtype) and grad_weight (when the head trains) are computed in forward.
      const double inc = std::ceil(V / d.h);
      const double chunk =
          std::pow(2.0, std::max(0.0, std::ceil(std::log2(std::max(1.0, std::ceil(T / inc))))));
      loss_saved = d.h * db * T + (head_trainable ? V * d.h * db : 0);
      fwd_extra = loss_saved + 3 * 4 * V * std::min(chunk, T);
      loss_bwd = loss_saved;
      break;
    }
  }
  // A loop that holds its `logits` name (LitGPT) keeps the model-dtype logits through backward,
  // where the loss alone would have kept only what cross-entropy saved.
  if (run.prev_graph_held && run.loss == LossPath::chunked) {
    loss_saved += db * V * T;
    loss_bwd += db * V * T;
  }
  // A 4-bit lm_head (chunked or not) dequantizes the whole head weight for its matmul.
  if (run.loss != LossPath::fused) fwd_extra += head_dequant;
  const bool head_keeps_h = (head_trainable || head_held) && run.loss != LossPath::fused;
  res.loss = loss_saved - (head_keeps_h ? 0 : h_out);
  // The previous step's graph, when the loop still holds it: its ctx-held bitsandbytes inputs
  // (none under reentrant checkpointing: the recomputed graphs were local to each backward) and
  // its logits (the model-dtype outputs the loop's `logits` name keeps).
  if (run.prev_graph_held) {
    const double held = ckpt ? 0 : first_held + (L - 1) * mid_held + (head_held ? h_out : 0);
    const double logits = run.loss == LossPath::fused ? 0 : db * V * T;
    res.prev_graph = held + logits;
  }
  res.forward_peak_extra = std::max(0.0, res.activations + fwd_extra + res.prev_graph);

  // ---- backward through one layer: reverse walk with reference-counted gradients ----
  auto walk = [&](const Graph& lg, int out, bool with_saved) {
    // Returns {peak above the bytes live before the walk, param grads, saved released}.
    std::map<int, int> uses;  // storage -> prims that still need it
    for (const auto& p : lg.prims)
      for (int s : p.saved) ++uses[s];
    std::map<int, double> grad;  // tensor -> bytes of its gradient
    double cur = lg.tensors[out].elems * lg.tensors[out].bytes * T;
    double peak = cur, params = 0;
    grad[out] = cur;
    std::set<int> released;
    for (auto it = lg.prims.rbegin(); it != lg.prims.rend(); ++it) {
      const Prim& p = *it;
      double add_b = 0;
      for (int t : p.grad_inputs) add_b += lg.tensors[t].elems * lg.tensors[t].bytes * T;
      peak = std::max(peak, cur + add_b + p.extra * T + p.extra_abs + p.param_grad);
      params += p.param_grad;
      cur += p.param_grad;
      for (int t : p.grad_inputs) {
        const double b = lg.tensors[t].elems * lg.tensors[t].bytes * T;
        if (grad.count(t)) continue;  // accumulated in place
        grad[t] = b;
        cur += b;
      }
      for (int t : p.alias_inputs)
        if (!grad.count(t)) grad[t] = 0;
      if (auto gi = grad.find(p.out); gi != grad.end()) {
        cur -= gi->second;
        gi->second = 0;
      }
      if (with_saved) {
        for (int s : p.saved) {
          if (--uses[s] == 0 && s != 0 && !lg.held.count(s)) {
            cur -= lg.storages[s].per_token * T + lg.storages[s].absolute;
          }
        }
      }
    }
    return std::make_tuple(peak, params, cur);
  };
  auto [mid_peak, mid_params, mid_end] = walk(mid->first, mid->second, true);
  (void)mid_end;
  auto [first_peak, first_params, first_end] = walk(first->first, first->second, true);
  (void)first_end;
  const double head_grad = head_trainable ? V * d.h * db : 0;
  const double embed_grad = full && !false ? V * d.h * db : 0;
  (void)embed_grad;
  const double norm_grad = full ? d.h * db : 0;
  // Loss backward, then the lm_head backward (grad of logits in the model dtype + grad of h).
  // h (the head's input) is gone by then unless the trainable head saved it.
  const double h_kept = head_keeps_h ? 0 : h_out;
  double bwd = res.activations - h_kept + loss_bwd;
  bwd = std::max(bwd, res.activations + loss_saved - 4 * V * T + db * V * T + 4 * V * T + h_out +
                          head_grad + (run.loss != LossPath::fused ? head_dequant : 0));
  // Top layer: all activations (less the loss) + head grads + one layer's backward working set.
  // Reentrant recompute: the layer's saved set and its recomputed output exist again.
  const double ckpt_recompute = ckpt ? mid_own + h_out : 0;
  bwd = std::max(bwd, res.activations - h_out + head_grad + norm_grad + ckpt_recompute + mid_peak);
  // Bottom layer: what layer 0 keeps + every layer's parameter gradients + its working set.
  const double all_layer_grads = mid_params * (L - 1);
  const double bottom_saved = ckpt ? layer_in + rope_bytes + mask_bytes + first_own + h_out
                                   : first_own + (first_saves_in ? layer_in : 0) + rope_bytes;
  // Without checkpointing the layers above still hold their ctx-kept inputs (reentrant
  // recompute graphs are local to each layer's backward, so checkpointed runs do not).
  const double held_above = ckpt ? 0 : (L - 1) * mid_held + (head_held ? h_out : 0);
  bwd = std::max(
      bwd, stem + bottom_saved + head_grad + norm_grad + all_layer_grads + first_peak + held_above);
  res.backward_peak_extra = bwd;
  (void)first_params;
  return res;
}

Result<ParamBytes> param_bytes(const Architecture& a, const SimRun& run, bool double_quant,
                               std::uint64_t positions) {
  const auto& fs = families();
  if (!fs.error.empty()) return fail(Errc::malformed, fs.error);
  bool known = false;
  const Family& f = fs.by_name.at(std::string(family_for(a.family, &known)));
  Dims d{};
  d.h = static_cast<double>(a.hidden);
  d.hd = static_cast<double>(a.head_dim);
  d.q = static_cast<double>(a.heads * a.head_dim);
  d.kv = static_cast<double>(a.kv_heads * a.head_dim);
  d.i = static_cast<double>(a.intermediate);
  d.E = static_cast<double>(std::max<std::uint64_t>(a.experts, 1));
  const double db = run.model_bytes, ab = run.adapter_bytes, r = static_cast<double>(run.lora_rank);
  const double L = static_cast<double>(a.layers);
  ParamBytes pb;
  double dense = 0;  // non-quantized parameter elements
  for (const auto& [name, m] : f.modules) {
    bool used = false;
    for (const auto& line : f.layer) used = used || contains(line, "@" + name);
    if (!used) continue;
    auto din = eval_dim(m.d_in, d), dout = eval_dim(m.d_out, d);
    if (!din || !dout) return tl::unexpected(din ? dout.error() : din.error());
    const double copies = m.expert ? d.E : 1;
    const double n = *din * *dout;
    if (run.method == TrainMethod::qlora) {
      const double blocks = std::ceil(n / 64);
      const double absmax = double_quant ? blocks + std::ceil(blocks / 256) * 4 : blocks * 4;
      pb.base += L * copies * (std::ceil(n / 2) + absmax);
    } else {
      dense += L * copies * n;
    }
    if (m.bias) dense += L * copies * *dout;
    pb.base_params += L * copies * (n + (m.bias ? *dout : 0));
    if (is_targeted(run, name)) pb.adapter += L * copies * r * (*din + *dout) * ab;
  }
  double norms = 0;
  for (const auto& line : f.layer) {
    if (contains(line, "= rmsnorm") || contains(line, "= gemma_rmsnorm")) norms += d.h;
    if (contains(line, "= layernorm")) norms += 2 * d.h;
    if (contains(line, "head_rmsnorm") || contains(line, "head_gemma_rmsnorm")) norms += d.hd;
  }
  const double final_norm = f.norm == "layernorm" ? 2 * d.h : d.h;
  const double V = static_cast<double>(a.vocab);
  const bool tied = a.tied_embeddings;
  double other = L * norms + final_norm + V * d.h * (tied ? 1 : 2);
  if (f.learned_positions) other += static_cast<double>(positions) * d.h;
  if (f.name == "phi") other += V;  // lm_head bias
  dense += other;
  pb.base_params += other;
  pb.base += dense * db;
  pb.trainable = run.method == TrainMethod::full ? pb.base : pb.adapter;
  return pb;
}

}  // namespace sparkops::plan
