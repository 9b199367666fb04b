// A built layer graph read for its bytes: the forward's high-water mark as the caching allocator
// sees it, and the size of a set of storages (declared in plan/autograd_sim_graph.hpp).
#include <algorithm>
#include <set>
#include <vector>

#include "plan/autograd_sim_graph.hpp"

namespace sparkops::plan::sim {

double forward_peak(const Graph& g, int out, bool keep_saved, int skip, double tokens,
                    unsigned dequant_copies) {
  const int n = static_cast<int>(g.storages.size());
  const int never = static_cast<int>(g.prims.size());
  std::vector<int> born(n, never), dies(n, -1);
  for (int k = 0; k < never; ++k) {
    const Prim& p = g.prims[k];
    const int o = g.tensors[p.out].storage;
    born[o] = std::min(born[o], k);
    dies[o] = std::max(dies[o], k);
    for (int s : p.saved) {
      born[s] = std::min(born[s], k);
      dies[s] = std::max(dies[s], k);
    }
    for (int t : p.inputs) dies[g.tensors[t].storage] = std::max(dies[g.tensors[t].storage], k);
  }
  for (const auto& [s, k] : g.held_until) dies[s] = std::max(dies[s], k);
  dies[g.tensors[out].storage] = never;
  if (keep_saved)
    for (int s : g.saved) dies[s] = never;
  auto bytes = [&](int s) { return g.storages[s].per_token * tokens + g.storages[s].absolute; };
  std::vector<double> delta(never + 2, 0);
  for (int s = skip; s < n; ++s) {
    if (born[s] >= never) continue;
    delta[born[s]] += bytes(s);
    delta[std::min(dies[s], never) + 1] -= bytes(s);
  }
  double live = 0, peak = 0;
  for (int k = 0; k < never; ++k) {
    live += delta[k];
    const Prim& p = g.prims[k];
    peak = std::max(peak, live + p.fwd_extra * tokens);
    for (const Moment& m : p.fwd_moments)
      peak = std::max(peak, live + m.per_token * tokens + m.absolute);
    // MatMul4Bit.forward: the dequantized weight's copies exist before the output, one of them
    // (the .to(A.dtype) copy, or the only one) until the output does.
    if (const double dq = g.storages[g.tensors[p.out].storage].dequant; dq > 0)
      peak = std::max({peak,
                       live - bytes(g.tensors[p.out].storage) + dq * std::max(1u, dequant_copies),
                       live + dq});
  }
  return peak;
}

double saved_bytes(const Graph& g, const std::set<int>& ids, double tokens) {
  double b = 0;
  for (int s : ids) b += g.storages[s].per_token * tokens + g.storages[s].absolute;
  return b;
}

}  // namespace sparkops::plan::sim
