#include "plan/autograd_sim_graph.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <string>

#include <fmt/format.h>

#include "base/text.hpp"
#include "plan/autograd_sim_builder.hpp"

namespace sparkops::plan::sim {

namespace {

std::string graph_key(const Family& f, const SimRun& run, const Dims& d, unsigned db) {
  std::string k = fmt::format(
      "{}|{} {} {} {} {} {} {} {}|{} {} {} {} {}|{} {} {} {} {} {} {} {} {}", f.name, d.h, d.hd,
      d.heads, d.kvh, d.i, d.k, d.E,
      run.attn == AttnKernel::eager || run.attn == AttnKernel::math || f.seq_saves ? d.s : 0.0,
      static_cast<int>(run.method), db, run.adapter_bytes, d.r, run.lora_dropout > 0,
      run.all_linear, static_cast<int>(run.attn), static_cast<int>(run.ckpt), run.bnb_saves_input,
      run.dropout_off, run.fused_qkv_lora, run.dequant_copies, run.autocast_base_copies,
      run.targets.size());
  for (const auto& t : run.targets) k += "|" + t;
  return k;
}

}  // namespace

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
  // enable_input_require_grads under checkpointing (always, where the family says so).
  int x = g.fresh(d.h, db, full || ckpt || f.embed_requires_grad);
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
  if (f.position_ids) g.saved.insert(g.tensors[g.fresh(1, 4, false)].storage);  // int32 copy
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
  else if (f.norm == "te_rmsnorm")
    fb.te_rmsnorm(last);  // TransformerBlock.final_layernorm: TENorm, TE's RMSNorm
  else if (f.norm == "unsloth_rmsnorm")
    fb.unsloth_rmsnorm(last, 1);  // LlamaModel_fast_forward's final fast_rms_layernorm
  else
    fb.rmsnorm(last, 1, f.norm == "gemma_rmsnorm");
  std::lock_guard<std::mutex> lock(mu);
  if (cache.size() > 256) cache.clear();  // bounded: a long-running caller plans many shapes
  return cache.emplace(key, std::move(out)).first->second;
}

}  // namespace sparkops::plan::sim
