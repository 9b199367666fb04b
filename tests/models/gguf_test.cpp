#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gguf_writer.hpp"
#include "models/gguf.hpp"
#include "models/resolve.hpp"
#include "support/test_support.hpp"

namespace sparkops::models {
namespace {

using testing::GgufKv;
using testing::GgufTensorSpec;

constexpr std::uint32_t F32 = 0, Q4_K = 12, Q6_K = 14;

// Llama-3.1-8B as llama.cpp's convert_hf_to_gguf.py + llama-quantize Q4_K_M name and shape it
// (attn_v and ffn_down in Q6_K, output in Q6_K, norms in F32).
std::vector<GgufTensorSpec> llama8b_tensors() {
  std::vector<GgufTensorSpec> t;
  t.push_back({"token_embd.weight", {4096, 128256}, Q4_K});
  for (int l = 0; l < 32; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    t.push_back({p + "attn_norm.weight", {4096}, F32});
    t.push_back({p + "attn_q.weight", {4096, 4096}, Q4_K});
    t.push_back({p + "attn_k.weight", {4096, 1024}, Q4_K});
    t.push_back({p + "attn_v.weight", {4096, 1024}, Q6_K});
    t.push_back({p + "attn_output.weight", {4096, 4096}, Q4_K});
    t.push_back({p + "ffn_norm.weight", {4096}, F32});
    t.push_back({p + "ffn_gate.weight", {4096, 14336}, Q4_K});
    t.push_back({p + "ffn_up.weight", {4096, 14336}, Q4_K});
    t.push_back({p + "ffn_down.weight", {14336, 4096}, Q6_K});
  }
  t.push_back({"output_norm.weight", {4096}, F32});
  t.push_back({"output.weight", {4096, 128256}, Q6_K});
  return t;
}

std::vector<GgufKv> llama8b_kvs() {
  return {{"general.architecture", std::string("llama")},
          {"general.name", std::string("Meta Llama 3.1 8B Instruct")},
          {"general.file_type", std::uint32_t{15}},
          {"llama.block_count", std::uint32_t{32}},
          {"llama.context_length", std::uint32_t{131072}},
          {"llama.embedding_length", std::uint32_t{4096}},
          {"llama.feed_forward_length", std::uint32_t{14336}},
          {"llama.attention.head_count", std::uint32_t{32}},
          {"llama.attention.head_count_kv", std::uint32_t{8}},
          {"llama.rope.freq_base", 500000.0f},
          {"llama.vocab_size", std::uint32_t{128256}},
          {"tokenizer.ggml.model", std::string("gpt2")},
          {"tokenizer.ggml.tokens", std::vector<std::string>{"<s>", "a", "b"}},
          {"general.alignment", std::uint32_t{32}}};
}

// Bytes per tensor from ggml's block sizes: Q4_K 144 B per 256, Q6_K 210 B per 256, F32 4 B.
std::uint64_t expected_bytes() {
  std::uint64_t b = 0;
  for (const auto& t : llama8b_tensors()) {
    std::uint64_t n = 1;
    for (auto d : t.ne) n *= d;
    b += t.type == F32 ? n * 4 : t.type == Q4_K ? n / 256 * 144 : n / 256 * 210;
  }
  return b;
}

TEST(Gguf, Llama8bQ4KMHeaderGivesArchitectureAndExactBytes) {
  test::TempDir tmp;
  testing::write_gguf(tmp / "llama.gguf", llama8b_kvs(), llama8b_tensors());
  auto f = read_gguf(tmp / "llama.gguf");
  ASSERT_TRUE(f) << f.error().detail;
  EXPECT_EQ(f->version, 3u);
  EXPECT_EQ(f->tensors.size(), 2u + 32 * 9 + 1);
  EXPECT_EQ(f->weight_bytes, expected_bytes());
  EXPECT_EQ(f->weight_elements, 8'030'261'248u);
  EXPECT_GT(f->bytes_by_type.at("Q6_K"), 0u);
  auto m = gguf_model(std::move(*f), "llama.gguf");
  ASSERT_TRUE(m) << m.error().detail;
  EXPECT_EQ(m->architecture, "llama");
  EXPECT_EQ(m->file_type, "Q4_K_M");
  EXPECT_EQ(m->context_length, 131072u);
  EXPECT_EQ(m->shape.arch.layers, 32u);
  EXPECT_EQ(m->shape.arch.kv_heads, 8u);
  EXPECT_EQ(m->shape.arch.head_dim, 128u);
  EXPECT_FALSE(m->shape.arch.tied_embeddings);
  EXPECT_EQ(m->shape.params.total, 8'030'261'248u);
  ASSERT_TRUE(m->shape.quant);
  EXPECT_EQ(m->shape.quant->method, QuantMethod::gguf);
  EXPECT_EQ(m->shape.quant->weight_bytes, expected_bytes());
  EXPECT_TRUE(m->shape.quant->exact);
}

TEST(Gguf, FileAndFolderResolveAsGgufSource) {
  test::TempDir tmp;
  testing::write_gguf(tmp / "model-Q4_K_M.gguf", llama8b_kvs(), llama8b_tensors());
  for (const auto& name : {(tmp / "model-Q4_K_M.gguf").string(), tmp.path().string()}) {
    auto m = resolve_model_name(name, {});
    ASSERT_TRUE(m) << m.error().detail;
    EXPECT_EQ(m->source, ModelSource::gguf);
    ASSERT_TRUE(m->gguf);
    EXPECT_EQ(m->gguf->weight_bytes, expected_bytes());
  }
}

Result<GgufFile> parse_bytes(const std::string& bytes) {
  return parse_gguf(bytes, bytes.size(), "x.gguf");
}

TEST(Gguf, BadMagicVersionAndTruncationAreOneLineErrors) {
  auto r = parse_bytes("GGML0000");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().detail.find("not a GGUF file"), std::string::npos);

  const std::string v1 = testing::gguf_header_bytes(llama8b_kvs(), {}, nullptr, 1);
  r = parse_bytes(v1);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::unsupported);

  const std::string full = testing::gguf_header_bytes(llama8b_kvs(), llama8b_tensors());
  r = parse_bytes(full.substr(0, full.size() / 2));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::malformed);
  EXPECT_NE(r.error().detail.find("x.gguf"), std::string::npos);
  // The same prefix of a longer file asks for more bytes instead.
  r = parse_gguf(full.substr(0, full.size() / 2), full.size() * 4, "x.gguf");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::too_large);
}

TEST(Gguf, TensorDataPastTheEndIsATruncatedDownload) {
  const std::string header = testing::gguf_header_bytes(llama8b_kvs(), llama8b_tensors());
  const auto r = parse_bytes(header);  // header only: no data section at all
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().detail.find("past the end of the file"), std::string::npos);
}

TEST(Gguf, UnknownTypeAndHugeCountsAreRejected) {
  auto header = testing::gguf_header_bytes({}, {{"t", {32}, 2}});
  // Patch the tensor's type (after name, n_dims, one dim) to 99.
  const std::size_t type_at = 4 + 4 + 8 + 8 + 8 + 1 + 4 + 8;
  header[type_at] = 99;
  auto r = parse_gguf(header, 1 << 20, "x.gguf");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().detail.find("unknown ggml type 99"), std::string::npos) << r.error().detail;

  std::string counts = "GGUF";
  counts += std::string("\x03\0\0\0", 4);
  counts += std::string("\xff\xff\xff\xff\xff\xff\xff\x7f", 8);  // 2^63 tensors
  counts += std::string(8, '\0');
  r = parse_bytes(counts);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().detail.find("tensor count"), std::string::npos);
}

TEST(Gguf, BlockSizesFollowGgml) {
  // ggml-common.h static_asserts: block_q4_K 2*2+12+128, block_q6_K 128+64+16+2, block_q8_0 2+32.
  EXPECT_EQ(ggml_type(12)->bytes, 144u);
  EXPECT_EQ(ggml_type(14)->bytes, 210u);
  EXPECT_EQ(ggml_type(8)->bytes, 34u);
  EXPECT_EQ(ggml_type(39)->bytes, 17u);
  EXPECT_FALSE(ggml_type(4));  // Q4_2, removed
}

TEST(GgufCli, PlanGgufFileSaysWhichSourceAnswered) {
  test::TempDir tmp;
  testing::write_gguf(tmp / "m.gguf", llama8b_kvs(), llama8b_tensors());
  const auto r = test::run_sparkops({"--root", test::fixture("plan/root-spark").string(), "plan",
                                     (tmp / "m.gguf").string(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["model"]["source"], "gguf");
  EXPECT_EQ(j["model"]["quantization"]["format"], "Q4_K_M");
  EXPECT_EQ(j["model"]["quantization"]["weight_bytes"], expected_bytes());
}

}  // namespace
}  // namespace sparkops::models
