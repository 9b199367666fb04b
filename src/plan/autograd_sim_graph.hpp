#pragma once
// The autograd graph of one training step as the activation model sees it: storages and the
// tensors that view them, the primitives backward runs (what each saves, which inputs receive a
// gradient), built from a family's layer program under PyTorch's save rules. Internal to the
// activation model: autograd_sim.hpp is the public interface.

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "base/result.hpp"
#include "plan/autograd_sim.hpp"
#include "plan/autograd_sim_families.hpp"

namespace sparkops::plan::sim {

struct Storage {
  double per_token = 0;  // bytes per token
  double absolute = 0;   // bytes independent of tokens (per-layer parameter copies)
  // A 4-bit linear's output: the bytes of its weight dequantized (quant_state dtype), which
  // MatMul4Bit.forward allocates just before this output (the allocator replay's order).
  double dequant = 0;
};
struct Tensor {
  int storage = -1;
  double elems = 0;  // per token
  unsigned bytes = 2;
  bool rg = false;
};

// Bytes alive together at one moment inside a primitive's formula, above what the walk counts
// (a fused autograd.Function's sequence of temporaries: its peak is the largest moment).
struct Moment {
  double per_token = 0;
  double absolute = 0;
};

// One primitive as backward sees it.
struct Prim {
  std::vector<int> inputs;        // every tensor operand (forward lifetimes: a storage's last use)
  std::vector<int> grad_inputs;   // tensors that receive a new gradient
  std::vector<int> alias_inputs;  // tensors whose gradient is the output gradient itself
  int out = -1;
  std::vector<int> saved;  // storages
  double param_grad = 0;   // bytes (absolute) of parameter gradients produced
  double extra = 0;        // per-token bytes of temporaries inside the backward formula
  double extra_abs = 0;    // bytes independent of tokens (a dequantized NF4 weight)
  double fwd_extra = 0;    // per-token bytes of temporaries inside the forward formula
  // Further moments of the forward and backward formulas, each taken on its own (may be
  // negative per token where the moment comes after a saved tensor was freed).
  std::vector<Moment> fwd_moments, bwd_moments;
  // The first grad input's gradient is written into this saved storage (`out=` the saved
  // tensor, Unsloth's inplace dX): no allocation, and the storage's bytes stay as that gradient.
  int grad_into_saved = -1;
};

struct Graph {
  std::vector<Storage> storages;
  std::vector<Tensor> tensors;
  std::vector<Prim> prims;
  std::set<int> saved;       // storages saved by some prim
  std::set<int> held;        // saved as a ctx attribute: released with the graph, not by backward
  bool keeps_freqs = false;  // a TE fused RoPE saved the shared rotary freqs (a gradient flowed)
  // storage -> the prim whose output frees it: a caller's variable holds a module's input until
  // the module returns (Family::held), past the storage's last use as an operand.
  std::map<int, int> held_until;
  // tensor -> the alias tensors a split/chunk cut it into: backward gives each piece its own
  // gradient, and the split's backward joins them into one gradient of the whole.
  std::map<int, std::vector<int>> split_pieces;

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
  // Keeps storage s alive at least until prim k has run.
  void hold(int s, int k) {
    auto [it, fresh] = held_until.emplace(s, k);
    if (!fresh) it->second = std::max(it->second, k);
  }
  int push(Prim p) {
    prims.push_back(std::move(p));
    return prims.back().out;
  }
};

// The forward pass through a layer graph as the caching allocator sees it: each storage is
// allocated by the first prim that makes or keeps it and freed after its last use as an operand
// (or after the prim Graph::held_until names), unless backward keeps it (`keep_saved`: the forward
// of a graph that records; false: a no_grad forward, which keeps nothing). The first `skip`
// storages (the layer input, the shared cos/sin) and the output's are counted by the caller
// (the output stays). Returns the largest live total, in bytes at `tokens` tokens, including each
// prim's in-formula temporaries and a 4-bit linear's dequantized weight (`dequant_copies` copies).
double forward_peak(const Graph& g, int out, bool keep_saved, int skip, double tokens,
                    unsigned dequant_copies);

// Bytes of the storages `ids` of g at `tokens` tokens.
double saved_bytes(const Graph& g, const std::set<int>& ids, double tokens);

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

// The step's graphs for family f under run, from a bounded cache keyed by everything the graphs
// depend on. Errors: a layer program line that does not parse (names the family and the line).
Result<std::shared_ptr<const StepGraphs>> step_graphs(const Family& f, const SimRun& run,
                                                      const Dims& d, unsigned db);

}  // namespace sparkops::plan::sim
