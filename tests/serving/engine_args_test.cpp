#include <gtest/gtest.h>

#include "serving/engine_args.hpp"

namespace sparkops::serving {
namespace {

std::vector<std::string> words(std::string_view text) {
  auto cl = split_command_line(text, "test");
  EXPECT_TRUE(cl.has_value());
  return cl ? cl->argv : std::vector<std::string>{};
}

TEST(CommandLine, SplitsLikeAShell) {
  auto cl = split_command_line(
      R"(OLLAMA_NUM_PARALLEL=4 OLLAMA_KV_CACHE_TYPE=q8_0 ollama serve --x 'a b' "c d" e\ f)", "t");
  ASSERT_TRUE(cl.has_value());
  ASSERT_EQ(cl->env.size(), 2u);
  EXPECT_EQ(cl->env[0].first, "OLLAMA_NUM_PARALLEL");
  EXPECT_EQ(cl->env[0].second, "4");
  EXPECT_EQ(cl->argv, (std::vector<std::string>{"ollama", "serve", "--x", "a b", "c d", "e f"}));
  auto bad = split_command_line("vllm serve 'unterminated", "--beside x");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().detail.find("--beside x"), std::string::npos);
}

TEST(EngineArgs, VllmFlagsAsVllmSpellsThem) {
  auto a = parse_serve_args(ServeEngine::vllm,
                            words("vllm serve Qwen/Qwen3-32B --max-model-len 32k "
                                  "--gpu_memory_utilization=0.5 --kv-cache-dtype fp8 "
                                  "--max-num-seqs 16 -tp 2"),
                            {}, 0);
  ASSERT_TRUE(a.has_value()) << a.error().detail;
  EXPECT_EQ(a->model, "Qwen/Qwen3-32B");
  EXPECT_EQ(a->max_context, 32000u);  // vLLM's human-readable ints: k = 1000, K = 1024
  EXPECT_DOUBLE_EQ(*a->fraction, 0.5);
  EXPECT_TRUE(a->fraction_given);
  EXPECT_EQ(a->kv_dtype.bytes_per_value, 1);
  EXPECT_EQ(a->parallel, 16u);
  EXPECT_EQ(a->tensor_parallel, 2u);
  // Defaults by device size (vllm/engine/arg_utils.py get_batch_defaults).
  auto big = parse_serve_args(ServeEngine::vllm, words("--max-model-len 4096"), {}, 121ULL << 30);
  EXPECT_EQ(big->parallel, 1024u);
  EXPECT_EQ(big->batch_tokens, 8192u);
  EXPECT_DOUBLE_EQ(*big->fraction, 0.9);
  EXPECT_FALSE(big->fraction_given);
  auto small = parse_serve_args(ServeEngine::vllm, {}, {}, 24ULL << 30);
  EXPECT_EQ(small->parallel, 256u);
  EXPECT_EQ(small->batch_tokens, 2048u);
}

TEST(EngineArgs, BadValuesNameTheFlag) {
  auto f = parse_serve_args(ServeEngine::vllm, words("--gpu-memory-utilization 1.5"), {}, 0);
  ASSERT_FALSE(f.has_value());
  EXPECT_NE(f.error().detail.find("--gpu-memory-utilization"), std::string::npos);
  auto c = parse_serve_args(ServeEngine::llama_cpp, words("-c lots"), {}, 0);
  ASSERT_FALSE(c.has_value());
  EXPECT_NE(c.error().detail.find("-c"), std::string::npos);
  auto k = parse_serve_args(ServeEngine::llama_cpp, words("-ctk fp8"), {}, 0);
  ASSERT_FALSE(k.has_value());
  auto o = parse_serve_args(ServeEngine::ollama, {}, {{"OLLAMA_NUM_PARALLEL", "zero"}}, 0);
  ASSERT_FALSE(o.has_value());
  EXPECT_NE(o.error().detail.find("OLLAMA_NUM_PARALLEL"), std::string::npos);
}

TEST(EngineArgs, LlamaCppAndOllama) {
  auto l = parse_serve_args(ServeEngine::llama_cpp,
                            words("llama-server -m m.gguf -c 32768 -np 4 -ngl 99 -ctk q8_0 "
                                  "-ctv q4_0 --no-mmap -fa off"),
                            {}, 0);
  ASSERT_TRUE(l.has_value()) << l.error().detail;
  EXPECT_EQ(l->max_context, 32768u);
  EXPECT_TRUE(l->context_is_total);
  EXPECT_EQ(l->parallel, 4u);
  EXPECT_EQ(l->gpu_layers, 99);
  EXPECT_DOUBLE_EQ(l->kv_dtype.bytes_per_value, (34.0 / 32 + 18.0 / 32) / 2);
  EXPECT_FALSE(l->mmap);
  EXPECT_FALSE(l->flash_attention);
  auto d = parse_serve_args(ServeEngine::llama_cpp, {}, {}, 0);
  EXPECT_EQ(d->max_context, 4096u);
  EXPECT_TRUE(d->flash_attention);
  auto o = parse_serve_args(ServeEngine::ollama, {},
                            {{"OLLAMA_NUM_PARALLEL", "4"},
                             {"OLLAMA_CONTEXT_LENGTH", "8192"},
                             {"OLLAMA_MAX_LOADED_MODELS", "1"},
                             {"OLLAMA_KV_CACHE_TYPE", "q8_0"},
                             {"OLLAMA_FLASH_ATTENTION", "1"}},
                            0);
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->parallel, 4u);
  EXPECT_EQ(o->max_context, 8192u);
  EXPECT_EQ(o->loaded_models, 1u);
  EXPECT_EQ(o->kv_dtype.name, "q8_0");
  // A quantized KV type without flash attention is planned as f16, with a note.
  auto nofa = parse_serve_args(ServeEngine::ollama, {}, {{"OLLAMA_KV_CACHE_TYPE", "q8_0"}}, 0);
  EXPECT_EQ(nofa->kv_dtype.name, "f16");
  EXPECT_FALSE(nofa->notes.empty());
}

TEST(EngineArgs, SglangDefaultFractionFollowsTensorParallel) {
  auto s = parse_serve_args(ServeEngine::sglang,
                            words("python -m sglang.launch_server --model-path M --tp 2"), {}, 0);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->model, "M");
  EXPECT_DOUBLE_EQ(*s->fraction, 0.87);
  EXPECT_FALSE(s->fraction_given);
}

}  // namespace
}  // namespace sparkops::serving
