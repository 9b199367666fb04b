#pragma once
// KV cache bytes from the architecture (docs/serving.md "KV cache per token"):
//   a full-attention layer caches K and V for every token: kv_heads x head_dim x 2 x dtype bytes;
//   GQA/MQA enter through kv_heads (Llama-3.1-8B: 32 layers x 8 x 128 x 2 x 2 B = 131,072 B);
//   an MLA layer (DeepSeek-V2/V3) caches one latent of kv_lora_rank + qk_rope_head_dim values;
//   a sliding-window layer keeps at most `sliding_window` tokens of each sequence.
// Tensor parallelism splits the KV heads across devices (replicated when kv_heads < tp).

#include <cstdint>

#include "models/model_shape.hpp"

namespace sparkops::serving {

struct KvLayout {
  double layer_bytes_per_token = 0;  // one layer, one token, this device
  std::uint64_t full_layers = 0;
  std::uint64_t sliding_layers = 0;
  std::uint64_t window = 0;  // tokens a sliding layer keeps per sequence
  bool mla = false;
};

KvLayout kv_layout(const models::Architecture& a, double bytes_per_value,
                   std::uint64_t tensor_parallel = 1);

// Bytes per token while a sequence is shorter than the window: every layer counts.
double kv_bytes_per_token(const KvLayout& k);
// Bytes per token beyond the window: only full-attention layers grow.
double kv_bytes_per_token_beyond_window(const KvLayout& k);

// Bytes one sequence of `tokens` holds (sliding layers capped at the window).
double kv_bytes_for_sequence(const KvLayout& k, std::uint64_t tokens);

// The longest sequence whose cache fits `bytes` (0 when not even one token fits).
std::uint64_t longest_sequence_in(const KvLayout& k, double bytes);

}  // namespace sparkops::serving
