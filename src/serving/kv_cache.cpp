#include "serving/kv_cache.hpp"

#include <algorithm>
#include <cmath>

namespace sparkops::serving {

namespace {

// A token count from a quotient of untrusted sizes: floored, and clamped below 2^40 so the
// conversion is always defined.
std::uint64_t to_count(double v) {
  if (!(v > 0)) return 0;
  return static_cast<std::uint64_t>(std::floor(std::min(v, 1099511627776.0)));
}

}  // namespace

KvLayout kv_layout(const models::Architecture& a, double bytes_per_value,
                   std::uint64_t tensor_parallel) {
  KvLayout k;
  const std::uint64_t tp = std::max<std::uint64_t>(1, tensor_parallel);
  if (a.kv_lora_rank > 0) {
    // MLA: the latent is not split across TP ranks (each rank keeps the whole latent).
    k.mla = true;
    k.layer_bytes_per_token =
        static_cast<double>(a.kv_lora_rank + a.qk_rope_head_dim) * bytes_per_value;
  } else {
    const std::uint64_t heads_here = std::max<std::uint64_t>(1, (a.kv_heads + tp - 1) / tp);
    k.layer_bytes_per_token = static_cast<double>(heads_here * a.head_dim) * 2.0 * bytes_per_value;
  }
  k.sliding_layers = std::min(a.sliding_layers, a.layers);
  k.window = a.sliding_window;
  if (k.window == 0) k.sliding_layers = 0;
  k.full_layers = a.layers - k.sliding_layers;
  return k;
}

double kv_bytes_per_token(const KvLayout& k) {
  return k.layer_bytes_per_token * static_cast<double>(k.full_layers + k.sliding_layers);
}

double kv_bytes_per_token_beyond_window(const KvLayout& k) {
  return k.layer_bytes_per_token * static_cast<double>(k.full_layers);
}

double kv_bytes_for_sequence(const KvLayout& k, std::uint64_t tokens) {
  const double t = static_cast<double>(tokens);
  const double windowed = static_cast<double>(std::min(tokens, k.window));
  return k.layer_bytes_per_token * (static_cast<double>(k.full_layers) * t +
                                    static_cast<double>(k.sliding_layers) * windowed);
}

std::uint64_t longest_sequence_in(const KvLayout& k, double bytes) {
  if (bytes <= 0 || k.layer_bytes_per_token <= 0) return 0;
  const double all = kv_bytes_per_token(k);
  const double window = static_cast<double>(k.window);
  if (k.sliding_layers == 0 || bytes <= all * window) {
    return to_count(bytes / all);
  }
  const double beyond = kv_bytes_per_token_beyond_window(k);
  if (beyond <= 0) return UINT32_MAX;  // only sliding layers: any length fits once the window does
  const double rest = bytes - all * window;
  return k.window + to_count(rest / beyond);
}

}  // namespace sparkops::serving
