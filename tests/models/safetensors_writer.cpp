#include "safetensors_writer.hpp"

#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace sparkops::models::testing {

namespace {

std::uint64_t dtype_size(const std::string& d) {
  if (d == "F64" || d == "I64" || d == "U64") return 8;
  if (d == "F32" || d == "I32" || d == "U32") return 4;
  if (d == "U8" || d == "I8" || d == "F8_E4M3" || d == "F8_E5M2" || d == "F8_E8M0") return 1;
  return 2;
}

}  // namespace

void write_raw_safetensors(const std::filesystem::path& path, std::uint64_t declared_length,
                           const std::string& header, std::uint64_t data_bytes) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    char len[8];
    for (int i = 0; i < 8; ++i) len[i] = static_cast<char>((declared_length >> (8 * i)) & 0xff);
    out.write(len, 8);
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
  }
  std::filesystem::resize_file(path, 8 + header.size() + data_bytes);
}

std::uint64_t write_safetensors(const std::filesystem::path& path,
                                const std::vector<FakeTensor>& tensors) {
  nlohmann::json h = nlohmann::json::object();
  h["__metadata__"] = {{"format", "pt"}};
  std::uint64_t offset = 0;
  for (const auto& t : tensors) {
    std::uint64_t n = dtype_size(t.dtype);
    for (const auto d : t.shape) n *= d;
    h[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + n}}};
    offset += n;
  }
  std::string header = h.dump();
  while (header.size() % 8 != 0) header += ' ';
  write_raw_safetensors(path, header.size(), header, offset);
  return 8 + header.size() + offset;
}

std::vector<FakeTensor> llama_tensors(const Architecture& a) {
  std::vector<FakeTensor> t;
  const std::uint64_t q = a.heads * a.head_dim;
  const std::uint64_t kv = a.kv_heads * a.head_dim;
  t.push_back({"model.embed_tokens.weight", {a.vocab, a.hidden}});
  for (std::uint64_t l = 0; l < a.layers; ++l) {
    const std::string p = fmt::format("model.layers.{}.", l);
    t.push_back({p + "input_layernorm.weight", {a.hidden}});
    t.push_back({p + "self_attn.q_proj.weight", {q, a.hidden}});
    t.push_back({p + "self_attn.k_proj.weight", {kv, a.hidden}});
    t.push_back({p + "self_attn.v_proj.weight", {kv, a.hidden}});
    if (a.qkv_bias) {
      t.push_back({p + "self_attn.q_proj.bias", {q}});
      t.push_back({p + "self_attn.k_proj.bias", {kv}});
      t.push_back({p + "self_attn.v_proj.bias", {kv}});
    }
    t.push_back({p + "self_attn.o_proj.weight", {a.hidden, q}});
    t.push_back({p + "post_attention_layernorm.weight", {a.hidden}});
    t.push_back({p + "mlp.gate_proj.weight", {a.intermediate, a.hidden}});
    t.push_back({p + "mlp.up_proj.weight", {a.intermediate, a.hidden}});
    t.push_back({p + "mlp.down_proj.weight", {a.hidden, a.intermediate}});
  }
  t.push_back({"model.norm.weight", {a.hidden}});
  if (!a.tied_embeddings) t.push_back({"lm_head.weight", {a.vocab, a.hidden}});
  return t;
}

void write_sharded_model(const std::filesystem::path& dir, const std::vector<FakeTensor>& tensors,
                         std::size_t shards) {
  std::filesystem::create_directories(dir);
  nlohmann::json index;
  index["metadata"] = {{"total_size", 0}};
  index["weight_map"] = nlohmann::json::object();
  // Shard s holds tensors [s·n/shards, (s+1)·n/shards): every shard non-empty when n >= shards.
  const std::size_t n = tensors.size();
  for (std::size_t s = 0; s < shards; ++s) {
    const std::string name = fmt::format("model-{:05}-of-{:05}.safetensors", s + 1, shards);
    std::vector<FakeTensor> part;
    for (std::size_t i = s * n / shards; i < (s + 1) * n / shards; ++i) {
      part.push_back(tensors[i]);
      index["weight_map"][tensors[i].name] = name;
    }
    write_safetensors(dir / name, part);
  }
  std::ofstream(dir / "model.safetensors.index.json") << index.dump(1);
}

}  // namespace sparkops::models::testing
