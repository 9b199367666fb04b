#include <gtest/gtest.h>

#include "models/model_shape.hpp"
#include "models/quantization.hpp"
#include "models/safetensors.hpp"
#include "safetensors_writer.hpp"
#include "support/test_support.hpp"

namespace sparkops::models {
namespace {

std::string config_text(std::string_view name) {
  return test::slurp(
      test::fixture(std::string("models/configs/") + std::string(name) + "/config.json"));
}

Quantization quant_of(std::string_view name) {
  const std::string text = config_text(name);
  auto q = parse_quantization_config(text, name);
  EXPECT_TRUE(q && *q) << name << (q ? "" : q.error().detail);
  return q && *q ? **q : Quantization{};
}

// The stored bytes a config implies, derived against the real repos' published configs. Expected
// values come from the per-format layouts (docs/models.md), computed independently of the C++.
std::uint64_t derived_bytes(std::string_view name) {
  const std::string text = config_text(name);
  auto a = parse_config_json(text, name);
  EXPECT_TRUE(a);
  Quantization q = quant_of(name);
  EXPECT_TRUE(derive_quantized_bytes(*a, q));
  EXPECT_FALSE(q.exact);
  return q.weight_bytes;
}

TEST(Quantization, UnquantizedConfigHasNone) {
  auto q = parse_quantization_config(config_text("Llama-3.1-8B"), "c");
  ASSERT_TRUE(q);
  EXPECT_FALSE(*q);
}

TEST(Quantization, UnslothBnb4bitIsNf4WithDoubleQuant) {
  const auto q = quant_of("Llama-3.3-70B-Instruct-bnb-4bit");
  EXPECT_EQ(q.method, QuantMethod::bnb_4bit);
  EXPECT_EQ(q.format, "nf4");
  EXPECT_TRUE(q.double_quant);
  EXPECT_EQ(q.quant_storage, "uint8");
  EXPECT_EQ(q.training, QuantTraining::frozen_quantized);
  EXPECT_NE(q.training_note.find("QLoRA"), std::string::npos);
  // 70.55 B parameters: 39.5 GB stored, not the 141 GB of bf16.
  EXPECT_EQ(derived_bytes("Llama-3.3-70B-Instruct-bnb-4bit"), 39'517'721'792u);
}

TEST(Quantization, GptqLayoutMatchesAutoGptqTensors) {
  const auto q = quant_of("Llama-2-7B-GPTQ");
  EXPECT_EQ(q.method, QuantMethod::gptq);
  EXPECT_EQ(q.bits, 4u);
  EXPECT_EQ(q.group_size, 128u);
  // qweight + qzeros + scales + g_idx per linear map, 16-bit embeddings/lm_head/norms.
  EXPECT_EQ(derived_bytes("Llama-2-7B-GPTQ"), 3'893'862'400u);
}

TEST(Quantization, AwqKeepsBiasesAndEmbeddingsAt16Bit) {
  const auto q = quant_of("Qwen2.5-7B-Instruct-AWQ");
  EXPECT_EQ(q.method, QuantMethod::awq);
  EXPECT_EQ(q.format, "int4 g128");
  EXPECT_EQ(derived_bytes("Qwen2.5-7B-Instruct-AWQ"), 5'570'747'392u);
}

TEST(Quantization, BlockFp8TrainsDequantized) {
  const auto q = quant_of("Qwen3-8B-FP8");
  EXPECT_EQ(q.method, QuantMethod::fp8);
  EXPECT_EQ(q.block_rows, 128u);
  EXPECT_EQ(q.training, QuantTraining::dequantized);
  EXPECT_EQ(derived_bytes("Qwen3-8B-FP8"), 9'437'399'040u);
}

TEST(Quantization, CompressedTensorsFp8PerChannel) {
  const auto q = quant_of("Meta-Llama-3.1-8B-Instruct-FP8");
  EXPECT_EQ(q.method, QuantMethod::compressed_tensors);
  EXPECT_EQ(q.format, "fp8 channel");
  EXPECT_EQ(q.not_converted, std::vector<std::string>{"lm_head"});
  EXPECT_EQ(derived_bytes("Meta-Llama-3.1-8B-Instruct-FP8"), 9'083'953'152u);
}

TEST(Quantization, ModeloptNvfp4) {
  const auto q = quant_of("Llama-3.1-8B-Instruct-FP4");
  EXPECT_EQ(q.method, QuantMethod::nvfp4);
  EXPECT_EQ(q.group_size, 16u);
  EXPECT_EQ(derived_bytes("Llama-3.1-8B-Instruct-FP4"), 6'027'749'120u);
}

TEST(Quantization, GptOssMxfp4QuantizesOnlyExperts) {
  const std::string text = config_text("gpt-oss-20b");
  auto a = parse_config_json(text, "gpt-oss");
  ASSERT_TRUE(a);
  Quantization q = quant_of("gpt-oss-20b");
  EXPECT_EQ(q.method, QuantMethod::mxfp4);
  EXPECT_EQ(q.training, QuantTraining::dequantized);
  ASSERT_TRUE(derive_quantized_bytes(*a, q));
  // Experts: 24 layers x 32 experts x 3 maps x 2880 x 2880 values at 4.25 bits; the rest bf16.
  const std::uint64_t expert_values = 24ull * 32 * 3 * 2880 * 2880;
  const std::uint64_t rest = count_params(*a).total - expert_values;
  EXPECT_EQ(q.weight_bytes, expert_values / 2 + expert_values / 32 + rest * 2);
}

TEST(Quantization, UnknownMethodIsErrorNamingIt) {
  const auto r = parse_quantization_config(
      R"({"quantization_config": {"quant_method": "hqq", "nbits": 4}})", "x/config.json");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().detail.find("hqq"), std::string::npos);
  EXPECT_NE(r.error().detail.find("x/config.json"), std::string::npos);
}

TEST(Quantization, GptqWithoutBitsIsMalformed) {
  const auto r =
      parse_quantization_config(R"({"quantization_config": {"quant_method": "gptq"}})", "c");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::malformed);
}

// A directory whose shards hold the quantized tensors: bytes come from the headers exactly.
TEST(Quantization, HeadersGiveExactStoredBytes) {
  test::TempDir tmp;
  test::write_text(tmp / "config.json", config_text("Llama-2-7B-GPTQ"));
  std::vector<testing::FakeTensor> t = {
      {"model.layers.0.self_attn.q_proj.qweight", {512, 4096}, "I32"},
      {"model.layers.0.self_attn.q_proj.scales", {32, 4096}, "F16"},
      {"model.embed_tokens.weight", {32000, 4096}, "F16"}};
  const auto size = testing::write_safetensors(tmp / "model.safetensors", t);
  auto m = read_model_dir(tmp.path());
  ASSERT_TRUE(m) << m.error().detail;
  ASSERT_TRUE(m->shape.quant);
  EXPECT_TRUE(m->shape.quant->exact);
  EXPECT_EQ(m->shape.quant->weight_bytes, 512u * 4096 * 4 + 32u * 4096 * 2 + 32000u * 4096 * 2);
  EXPECT_LT(m->shape.quant->weight_bytes, size);
}

}  // namespace
}  // namespace sparkops::models
