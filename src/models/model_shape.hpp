#pragma once
// The architecture of a decoder-only transformer as far as memory planning needs it, and exact
// parameter counts derived from it (GQA, head_dim, tied embeddings, biases, MoE experts).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "models/quantization.hpp"

namespace sparkops::models {

struct GgufFile;

enum class MlpKind { gated, plain };  // gated: gate/up/down (SwiGLU, GeGLU); plain: fc1/fc2 (GELU)

struct Architecture {
  std::string family;  // config.json model_type: "llama", "qwen2", "gpt_oss", ...
  std::uint64_t hidden = 0;
  std::uint64_t layers = 0;
  std::uint64_t heads = 0;
  std::uint64_t kv_heads = 0;
  std::uint64_t head_dim = 0;      // hidden / heads unless the config says otherwise
  std::uint64_t intermediate = 0;  // dense MLP width, or per-expert width for MoE
  std::uint64_t vocab = 0;
  bool tied_embeddings = false;
  MlpKind mlp = MlpKind::gated;
  bool qkv_bias = false;               // Qwen2: q/k/v biases
  bool o_bias = false;                 // gpt-oss: o_proj bias too
  bool mlp_bias = false;               // expert/MLP biases (gpt-oss)
  bool qk_norm = false;                // Qwen3, Gemma-3: per-head RMSNorm on q and k
  bool attn_sinks = false;             // gpt-oss: one learned sink per head
  bool post_norms = false;             // Gemma-2/3: 4 norms per layer instead of 2
  bool needs_eager_attention = false;  // softcapping/sinks: HF falls back to eager attention
  std::uint64_t experts = 0;           // 0 = dense
  std::uint64_t experts_per_token = 0;
  bool router_bias = false;
  std::uint64_t extra_params = 0;  // e.g. a vision tower, counted in total, kept 16-bit
  // The attention cache's layout (serving: KV cache per token, docs/serving.md). A sliding-window
  // layer keeps at most `sliding_window` tokens per sequence; an MLA layer (DeepSeek-V2/V3) caches
  // one compressed latent of kv_lora_rank + qk_rope_head_dim values per token instead of K and V.
  std::uint64_t sliding_window = 0;    // tokens; 0 = every layer attends the whole context
  std::uint64_t sliding_layers = 0;    // how many of `layers` use the window
  std::uint64_t kv_lora_rank = 0;      // MLA latent width; 0 = not MLA
  std::uint64_t qk_rope_head_dim = 0;  // MLA: the RoPE key part cached beside the latent
  std::uint64_t max_context = 0;       // max_position_embeddings; 0 = not stated
};

// Parameter counts, all exact integers. total = embedding + lm_head + linear + other.
struct ParamCounts {
  std::uint64_t total = 0;
  std::uint64_t active = 0;     // per token: dense parts + experts_per_token experts
  std::uint64_t embedding = 0;  // input embedding
  std::uint64_t lm_head = 0;    // 0 when tied
  std::uint64_t linear = 0;     // weights (+biases) of the layers' linear maps and routers:
                                // what bitsandbytes quantizes
  std::uint64_t other = 0;      // norms, sinks, extra_params: kept 16-bit
};

ParamCounts count_params(const Architecture& a);

// Active parameters the way OpenAI's gpt-oss card counts them (embedding lookup excluded).
std::uint64_t active_params_excluding_embedding(const ParamCounts& c);

// One linear map of a layer (per expert for MoE), for LoRA sizing and Adafactor factors.
struct LinearMap {
  std::string_view name;  // "q_proj", "gate_proj", ...
  std::uint64_t d_in = 0;
  std::uint64_t d_out = 0;
  std::uint64_t copies = 1;  // experts
  bool attention = false;
};
std::vector<LinearMap> layer_linears(const Architecture& a);

// A shape ready for estimation: the architecture and the counts (which may have been given as a
// total by --params, in which case `linear` is what remains after embeddings and norms).
struct ModelShape {
  std::string name;
  Architecture arch;
  ParamCounts params;
  std::optional<Quantization> quant;  // a pre-quantized checkpoint (config, headers or GGUF)
};

// Plausibility bounds for sizes from configs, headers and flags: a field above its bound, or a
// shape whose parameter count exceeds kMaxPlausibleParams (100 T), is rejected before any
// arithmetic can overflow. `what` names the input in the Error.
inline constexpr double kMaxPlausibleParams = 1e14;
Status check_plausible(const Architecture& a, std::string_view what);

// Where a model came from and what was read or assumed.
// directory: a model folder; config_file: a config.json path; safetensors: a .safetensors file or
// index path; gguf: a .gguf file (or a folder holding one); hf_cache: the local Hugging Face
// cache; hub: fetched from the Hub now (and stored in the cache); catalogue; params (--params).
enum class ModelSource {
  catalogue,
  directory,
  config_file,
  safetensors,
  gguf,
  hf_cache,
  hub,
  params
};
std::string_view model_source_name(ModelSource s);

struct ShardInfo {
  std::string file;
  std::uint64_t bytes = 0;
};

struct ResolvedModel {
  ModelShape shape;
  ModelSource source = ModelSource::catalogue;
  std::string location;                             // directory path for directory/hf_cache
  std::vector<ShardInfo> shards;                    // empty for catalogue/params
  std::optional<std::uint64_t> safetensors_params;  // sum of tensor elements from headers
  std::optional<std::uint64_t> checkpoint_bytes;    // sum of shard data when known
  std::vector<std::string> notes;
  std::string revision;                  // hf_cache/hub: the snapshot's commit
  std::shared_ptr<const GgufFile> gguf;  // gguf: the parsed header (tensor table, metadata)
};

// --hidden --layers --heads --kv-heads --intermediate --vocab --tied
struct ArchOverrides {
  std::optional<std::uint64_t> hidden;
  std::optional<std::uint64_t> layers;
  std::optional<std::uint64_t> heads;
  std::optional<std::uint64_t> kv_heads;
  std::optional<std::uint64_t> intermediate;
  std::optional<std::uint64_t> vocab;
  std::optional<bool> tied;
  bool any() const;
};

// Pure: a Hugging Face config.json (text) -> Architecture. Reads the keys named in the .cpp
// (hidden_size, num_hidden_layers, ...; nested text_config for multimodal configs), ignores the
// rest. A missing required key or a non-JSON/truncated text is an Error naming `source`.
//   "hidden_size": 4096,
Result<Architecture> parse_config_json(std::string_view text, std::string_view source);

// A --params model: the catalogue shape nearest in total size, overridden by the given flags, with
// `total` pinned to `params`. `assumed` receives the catalogue name used for missing fields.
Result<ModelShape> shape_from_params(std::uint64_t params, const ArchOverrides& arch,
                                     std::string* assumed);

}  // namespace sparkops::models
