#include <algorithm>

#include <fmt/format.h>

#include "base/text.hpp"
#include "models/gguf.hpp"

namespace sparkops::models {

namespace {

// llama.cpp architecture names -> the config.json model_type families the estimator knows.
std::string family_of(std::string_view arch) {
  std::string f(arch);
  std::replace(f.begin(), f.end(), '-', '_');  // "gpt-oss" -> "gpt_oss"
  return f;
}

const GgufTensor* find_tensor(const GgufFile& f, std::string_view name) {
  for (const auto& t : f.tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

}  // namespace

Result<GgufModel> gguf_model(GgufFile file, std::string_view source) {
  GgufModel m;
  const auto arch = file.string_value("general.architecture");
  if (!arch || arch->empty()) {
    return fail(Errc::malformed, fmt::format("{}: GGUF without general.architecture", source));
  }
  m.architecture = *arch;
  const std::string p = *arch + ".";
  auto need = [&](const std::string& key) -> Result<std::uint64_t> {
    const auto v = file.uint_value(p + key);
    if (!v || *v == 0) {
      return fail(Errc::malformed, fmt::format("{}: GGUF metadata {} missing or zero", source,
                                               quote_for_message(p + key)));
    }
    return *v;
  };
  Architecture a;
  a.family = family_of(*arch);
  for (const auto& [key, field] :
       {std::pair{"block_count", &a.layers}, std::pair{"embedding_length", &a.hidden},
        std::pair{"attention.head_count", &a.heads}}) {
    auto v = need(key);
    if (!v) return tl::unexpected(v.error());
    *field = *v;
  }
  a.kv_heads = file.uint_value(p + "attention.head_count_kv").value_or(a.heads);
  a.head_dim = file.uint_value(p + "attention.key_length").value_or(a.hidden / a.heads);
  a.experts = file.uint_value(p + "expert_count").value_or(0);
  a.experts_per_token = file.uint_value(p + "expert_used_count").value_or(0);
  const auto expert_ff = file.uint_value(p + "expert_feed_forward_length");
  const auto ff = file.uint_value(p + "feed_forward_length");
  if (a.experts > 0 && expert_ff) {
    a.intermediate = *expert_ff;
  } else if (ff) {
    a.intermediate = *ff;
  } else {
    return fail(Errc::malformed, fmt::format("{}: GGUF metadata {} missing", source,
                                             quote_for_message(p + "feed_forward_length")));
  }
  // The vocabulary: {arch}.vocab_size, else the tokenizer's token list, else the embedding rows.
  if (const auto v = file.uint_value(p + "vocab_size")) {
    a.vocab = *v;
  } else if (const auto it = file.metadata.find("tokenizer.ggml.tokens");
             it != file.metadata.end() && std::holds_alternative<GgufArrayInfo>(it->second)) {
    a.vocab = std::get<GgufArrayInfo>(it->second).count;
  } else if (const auto* emb = find_tensor(file, "token_embd.weight");
             emb && emb->shape.size() == 2) {
    a.vocab = emb->shape[1];
  }
  if (a.vocab == 0)
    return fail(Errc::malformed, fmt::format("{}: GGUF without a vocabulary size", source));
  // llama.cpp writes output.weight only when the unembedding is not tied to token_embd.
  a.tied_embeddings = find_tensor(file, "output.weight") == nullptr;
  a.qkv_bias = find_tensor(file, "blk.0.attn_q.bias") != nullptr;
  a.o_bias = find_tensor(file, "blk.0.attn_output.bias") != nullptr;
  a.qk_norm = find_tensor(file, "blk.0.attn_q_norm.weight") != nullptr;
  a.attn_sinks = find_tensor(file, "blk.0.attn_sinks.weight") != nullptr;
  a.post_norms = find_tensor(file, "blk.0.post_attention_norm.weight") != nullptr &&
                 find_tensor(file, "blk.0.post_ffw_norm.weight") != nullptr;
  if (a.kv_heads == 0 || a.kv_heads > a.heads || a.head_dim == 0 ||
      a.experts_per_token > a.experts) {
    return fail(Errc::malformed,
                fmt::format("{}: inconsistent GGUF attention/expert counts", source));
  }
  m.context_length = file.uint_value(p + "context_length");
  a.max_context = m.context_length.value_or(0);
  // The cache layout llama.cpp builds (src/llama-model.cpp load_hparams, b6xxx): MLA keeps the
  // latent ({arch}.attention.kv_lora_rank + the RoPE key width); set_swa_pattern(2) for Gemma-2
  // and gpt-oss (even layers slide), (6) for Gemma-3 (all but every 6th layer slide).
  a.kv_lora_rank = file.uint_value(p + "attention.kv_lora_rank").value_or(0);
  if (a.kv_lora_rank > 0)
    a.qk_rope_head_dim = file.uint_value(p + "rope.dimension_count").value_or(0);
  if (const auto w = file.uint_value(p + "attention.sliding_window"); w && *w > 0) {
    std::uint64_t sliding = 0;
    if (a.family == "gemma2" || a.family == "gpt_oss") sliding = (a.layers + 1) / 2;
    if (a.family == "gemma3") sliding = a.layers - a.layers / 6;
    if (sliding > 0) {
      a.sliding_window = *w;
      a.sliding_layers = sliding;
    }
  }
  if (auto ok = check_plausible(a, source); !ok) return tl::unexpected(ok.error());

  Quantization q;
  q.method = QuantMethod::gguf;
  if (const auto ft = file.uint_value("general.file_type")) {
    if (const auto n = gguf_file_type_name(*ft)) m.file_type = std::string(*n);
  }
  if (m.file_type.empty() && !file.bytes_by_type.empty()) {
    m.file_type = std::max_element(file.bytes_by_type.begin(), file.bytes_by_type.end(),
                                   [](const auto& x, const auto& y) { return x.second < y.second; })
                      ->first;
  }
  q.format = m.file_type;
  q.bits = file.weight_elements == 0
               ? 16
               : static_cast<unsigned>((file.weight_bytes * 8 + file.weight_elements / 2) /
                                       file.weight_elements);
  q.weight_bytes = file.weight_bytes;
  q.exact = true;
  q.training = QuantTraining::dequantized;
  q.training_note =
      "GGUF weights: training stacks (transformers' gguf_file=) dequantize them to 16-bit; "
      "planned as bf16 weights";
  q.serving_note = "llama.cpp and Ollama serve the GGUF as stored";

  m.shape.name = file.string_value("general.name").value_or(std::string(source));
  m.shape.arch = a;
  m.shape.params = count_params(a);
  m.shape.quant = std::move(q);
  m.file = std::move(file);
  return m;
}

}  // namespace sparkops::models
