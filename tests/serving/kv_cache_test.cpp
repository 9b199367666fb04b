// KV cache per token against published figures (docs/serving.md "KV cache per token").
#include <gtest/gtest.h>

#include "models/catalogue.hpp"
#include "models/model_shape.hpp"
#include "serving/engine_args.hpp"
#include "serving/kv_cache.hpp"
#include "support/test_support.hpp"

namespace sparkops::serving {
namespace {
using test::fixture;
using test::slurp;

const models::Architecture& cat(std::string_view name) {
  const auto* e = models::find_in_catalogue(name);
  EXPECT_NE(e, nullptr) << name;
  return e->arch;
}

struct Published {
  const char* model;
  double bf16_bytes_per_token;  // every layer, bf16
  const char* where;
};

// layers x kv_heads x head_dim x 2 (K, V) x 2 bytes, the figures the model cards / vLLM paper /
// engine logs print for these shapes.
const Published kPublished[] = {
    {"Llama-3.1-8B", 131072, "docs/domain.md: 32 x 8 x 128 x 2 x 2"},
    {"Llama-3.1-70B", 327680, "320 KiB/token (80 layers, GQA 8)"},
    {"Llama-2-7B", 524288, "0.5 MiB/token (MHA 32 heads)"},
    {"Mistral-7B", 131072, "128 KiB/token"},
    {"Mixtral-8x7B", 131072, "128 KiB/token (experts do not touch the cache)"},
    {"Qwen2.5-7B", 57344, "56 KiB/token (GQA 4)"},
    {"Qwen2.5-72B", 327680, "320 KiB/token"},
    {"Qwen3-32B", 262144, "256 KiB/token"},
    {"Qwen3-30B-A3B", 98304, "96 KiB/token (48 layers, GQA 4)"},
    {"Phi-3-mini", 393216, "384 KiB/token (MHA, head_dim 96)"},
    {"Gemma-2-9B", 344064, "336 KiB/token (head_dim 256)"},
    {"gpt-oss-120b", 73728, "72 KiB/token (36 layers, 8 kv heads x 64)"},
};

TEST(KvCache, CatalogueFamiliesMatchPublishedBytesPerToken) {
  for (const auto& p : kPublished) {
    const auto k = kv_layout(cat(p.model), 2.0);
    EXPECT_DOUBLE_EQ(kv_bytes_per_token(k), p.bf16_bytes_per_token) << p.model << ": " << p.where;
  }
}

TEST(KvCache, DtypeScalesTheCache) {
  const auto& a = cat("Llama-3.1-8B");
  EXPECT_DOUBLE_EQ(
      kv_bytes_per_token(kv_layout(a, parse_kv_dtype(ServeEngine::vllm, "fp8")->bytes_per_value)),
      65536);
  // ggml q8_0: 34-byte blocks of 32 values.
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(kv_layout(
                       a, parse_kv_dtype(ServeEngine::llama_cpp, "q8_0")->bytes_per_value)),
                   69632);
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(
                       kv_layout(a, parse_kv_dtype(ServeEngine::ollama, "q4_0")->bytes_per_value)),
                   36864);
  EXPECT_FALSE(parse_kv_dtype(ServeEngine::llama_cpp, "fp8").has_value());
  EXPECT_FALSE(parse_kv_dtype(ServeEngine::vllm, "q8_0").has_value());
}

TEST(KvCache, SlidingWindowLayersStopGrowingAtTheWindow) {
  const auto& a = cat("gpt-oss-120b");  // 18 of 36 layers slide over 128 tokens
  const auto k = kv_layout(a, 2.0);
  EXPECT_EQ(k.sliding_layers, 18u);
  EXPECT_EQ(k.window, 128u);
  EXPECT_DOUBLE_EQ(kv_bytes_per_token_beyond_window(k), 36864);
  EXPECT_DOUBLE_EQ(kv_bytes_for_sequence(k, 100), 100 * 73728.0);
  EXPECT_DOUBLE_EQ(kv_bytes_for_sequence(k, 131072), 131072 * 36864.0 + 128 * 36864.0);
  // The longest sequence is the inverse of the above.
  EXPECT_EQ(longest_sequence_in(k, 131072 * 36864.0 + 128 * 36864.0), 131072u);
  EXPECT_EQ(longest_sequence_in(k, 100 * 73728.0), 100u);
}

TEST(KvCache, ConfigLayersAndMlaFromConfigJson) {
  // DeepSeek-V3: MLA caches (kv_lora_rank 512 + rope 64) x 61 layers x 2 B = 70,272 B/token, the
  // figure DeepSeek's V2 paper's comparison gives for this shape (vs 4.6 MiB as MHA).
  auto ds = models::parse_config_json(slurp(fixture("serving/configs/deepseek-v3/config.json")),
                                      "deepseek-v3");
  ASSERT_TRUE(ds.has_value()) << ds.error().detail;
  const auto k = kv_layout(*ds, 2.0);
  EXPECT_TRUE(k.mla);
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(k), 70272);
  EXPECT_EQ(ds->max_context, 163840u);
  // Gemma-3: all but every 6th layer slide over 1024 tokens (sliding_window_pattern 6).
  auto g3 = models::parse_config_json(slurp(fixture("serving/configs/gemma-3-27b/config.json")),
                                      "gemma-3");
  ASSERT_TRUE(g3.has_value()) << g3.error().detail;
  EXPECT_EQ(g3->sliding_layers, 52u);
  EXPECT_EQ(g3->sliding_window, 1024u);
  EXPECT_EQ(g3->sliding_layers, cat("Gemma-3-27B").sliding_layers);
  // gpt-oss names its layers in layer_types.
  auto oss = models::parse_config_json(slurp(fixture("models/configs/gpt-oss-20b/config.json")),
                                       "gpt-oss-20b");
  ASSERT_TRUE(oss.has_value());
  EXPECT_EQ(oss->sliding_layers, 12u);
  EXPECT_EQ(oss->sliding_layers, cat("gpt-oss-20b").sliding_layers);
  // Gemma-2 alternates.
  auto g2 = models::parse_config_json(slurp(fixture("models/configs/gemma-2-9b/config.json")),
                                      "gemma-2-9b");
  ASSERT_TRUE(g2.has_value());
  EXPECT_EQ(g2->sliding_layers, 21u);
  EXPECT_EQ(g2->sliding_layers, cat("Gemma-2-9B").sliding_layers);
  // Qwen2 configs carry a sliding_window that only applies with use_sliding_window.
  auto q =
      models::parse_config_json(slurp(fixture("models/configs/Qwen2.5-7B/config.json")), "qwen2.5");
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->sliding_layers, 0u);
}

TEST(KvCache, TensorParallelSplitsKvHeads) {
  const auto& a = cat("Llama-3.1-70B");
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(kv_layout(a, 2.0, 2)), 327680 / 2.0);
  // More ranks than KV heads: each rank keeps one head.
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(kv_layout(a, 2.0, 16)), 80 * 1 * 128 * 2 * 2.0);
}

}  // namespace
}  // namespace sparkops::serving
