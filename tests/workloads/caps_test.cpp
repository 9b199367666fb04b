#include "workloads/caps.hpp"

#include <gtest/gtest.h>

#include "base/units.hpp"

namespace sparkops::workloads {
namespace {

using Argv = std::vector<std::string>;
const Classification kVllm{Engine::vllm, Role::server, "vLLM"};
const Classification kSglang{Engine::sglang, Role::server, "SGLang"};
constexpr std::uint64_t kGb10Total = 125514548ULL * 1024;  // MemTotal 119.7 GiB

CapInfo cap_of(const Classification& kind, const Argv& argv, const host::EnvList& env = {},
               bool readable = true) {
  return parse_cap(kind, argv, env, readable);
}

// Every spelling of the caps seen in the command-line corpus (docs/procs.md).
TEST(VllmCap, SpaceSeparatedFraction) {
  const auto cap =
      cap_of(kVllm, {"vllm", "serve", "m", "--gpu-memory-utilization", "0.95", "--dtype=bfloat16"});
  EXPECT_EQ(cap.state, CapState::capped);
  EXPECT_DOUBLE_EQ(cap.fraction.value(), 0.95);
  EXPECT_EQ(cap.text, "gpu-memory-utilization 0.95");
}

TEST(VllmCap, EqualsSignFraction) {
  EXPECT_DOUBLE_EQ(
      cap_of(kVllm, {"vllm", "serve", "m", "--gpu-memory-utilization=0.22"}).fraction.value(),
      0.22);
}

TEST(VllmCap, UnderscoreSpellingAndLastOccurrenceWins) {
  const auto cap = cap_of(kVllm, {"vllm", "serve", "--gpu_memory_utilization", "0.3",
                                  "--gpu-memory-utilization", "0.4"});
  EXPECT_DOUBLE_EQ(cap.fraction.value(), 0.4);
}

TEST(VllmCap, OneIsAValidFraction) {
  EXPECT_DOUBLE_EQ(cap_of(kVllm, {"python", "-m", "vllm.entrypoints.openai.api_server",
                                  "--gpu-memory-utilization", "1.0"})
                       .fraction.value(),
                   1.0);
}

TEST(VllmCap, FlattenedBackslashArgumentsDoNotHideTheFlag) {
  const auto cap = cap_of(kVllm, {"vllm", "serve", "m", "\\", "--gpu-memory-utilization", "0.95",
                                  "\\", "--port", "8000"});
  EXPECT_DOUBLE_EQ(cap.fraction.value(), 0.95);
}

TEST(VllmCap, AbsentFlagIsUncappedAtTheDefault) {
  const auto cap =
      cap_of(kVllm, {"python", "-m", "vllm.entrypoints.openai.api_server", "--model", "m"});
  EXPECT_EQ(cap.state, CapState::uncapped);
  EXPECT_DOUBLE_EQ(cap.fraction.value(), 0.9);
  EXPECT_EQ(cap.text, "default 0.9");
  // 0.9 of a GB10's device total: the "claims 108 GB".
  EXPECT_EQ(format_bytes(cap_claim_bytes(cap, kGb10Total).value()), "107.7 GiB");
}

TEST(VllmCap, InvalidFractionIsIgnoredWithANote) {
  const auto cap = cap_of(kVllm, {"vllm", "serve", "--gpu-memory-utilization", "$MEM"});
  EXPECT_EQ(cap.state, CapState::uncapped);
  ASSERT_FALSE(cap.notes.empty());
  EXPECT_NE(cap.notes.front().find("$MEM"), std::string::npos);
}

TEST(VllmCap, KvCacheBytesClaimsTheKvBytes) {
  const auto cap = cap_of(kVllm, {"vllm", "serve", "m", "--kv-cache-memory-bytes", "8G"});
  EXPECT_EQ(cap.state, CapState::capped);
  EXPECT_EQ(cap_claim_bytes(cap, kGb10Total), 8ULL << 30);
}

TEST(VllmCap, EngineCoreHasNoFlagsOfItsOwn) {
  const auto cap =
      cap_of(Classification{Engine::vllm, Role::engine, "vLLM EngineCore"}, {"VLLM::EngineCore"});
  EXPECT_EQ(cap.state, CapState::uncapped);
  EXPECT_FALSE(cap.fraction);
  EXPECT_FALSE(cap_claim_bytes(cap, kGb10Total));
}

TEST(VllmBytes, DecimalLowercaseBinaryUppercase) {
  EXPECT_EQ(parse_vllm_bytes("8589934592"), 8589934592ULL);
  EXPECT_EQ(parse_vllm_bytes("8g"), 8000000000ULL);
  EXPECT_EQ(parse_vllm_bytes("8G"), 8ULL << 30);
  EXPECT_EQ(parse_vllm_bytes("25.6k"), 25600ULL);
  EXPECT_FALSE(parse_vllm_bytes("8 parsecs"));
}

TEST(SglangCap, BothSpellings) {
  EXPECT_DOUBLE_EQ(
      cap_of(kSglang, {"python", "-m", "sglang.launch_server", "--mem-fraction-static", "0.6"})
          .fraction.value(),
      0.6);
  EXPECT_DOUBLE_EQ(
      cap_of(kSglang, {"python", "-m", "sglang.launch_server", "--mem-fraction-static=0.8"})
          .fraction.value(),
      0.8);
  const auto absent = cap_of(kSglang, {"python", "-m", "sglang.launch_server"});
  EXPECT_EQ(absent.state, CapState::uncapped);
  EXPECT_FALSE(absent.fraction);
}

TEST(OllamaCap, EnvironmentCapsAreShown) {
  const Classification serve{Engine::ollama, Role::server, "Ollama serve"};
  const host::EnvList env = {{"OLLAMA_KEEP_ALIVE", "-1"},
                             {"OLLAMA_MAX_LOADED_MODELS", "1"},
                             {"OLLAMA_GPU_OVERHEAD", "2147483648"}};
  const auto cap = cap_of(serve, {"ollama", "serve"}, env);
  EXPECT_EQ(cap.state, CapState::uncapped);
  EXPECT_EQ(cap.text, "uncapped (max 1 models, keep-alive -1, gpu-overhead 2.0 GiB)");
  ASSERT_EQ(cap.notes.size(), 1u);
  EXPECT_NE(cap.notes[0].find("stay resident"), std::string::npos);
  EXPECT_EQ(cap_of(serve, {"ollama", "serve"}, {{"OLLAMA_KEEP_ALIVE", "24h"}}).text,
            "uncapped (max 3 (default) models, keep-alive 24h)");
  EXPECT_EQ(cap_of(serve, {"ollama", "serve"}, {}, false).text,
            "uncapped (environment unreadable)");
}

TEST(LlamaCppCap, LayersContextMlockNoMmap) {
  const Classification server{Engine::llama_cpp, Role::server, "llama-server"};
  const auto cap = cap_of(
      server, {"llama-server", "-m", "x.gguf", "-c", "0", "-ngl", "99", "--mlock", "--no-mmap"},
      {{"GGML_CUDA_ENABLE_UNIFIED_MEMORY", "1"}});
  EXPECT_EQ(cap.state, CapState::fixed_at_load);
  EXPECT_EQ(cap.text, "fixed at load (-ngl 99 -c 0 --mlock --no-mmap)");
  EXPECT_EQ(cap.notes.size(), 4u);
  EXPECT_EQ(cap_of(server, {"llama-server", "--n-gpu-layers", "999", "--ctx-size", "2048"}).text,
            "fixed at load (-ngl 999 -c 2048)");
  EXPECT_EQ(cap_of(server, {"llama-server", "--gpu-layers", "99", "--ctx-size", "8192"}).text,
            "fixed at load (-ngl 99 -c 8192)");
}

TEST(TrainerCap, AllocatorConfIsANoteNotACap) {
  const Classification trl{Engine::trainer, Role::trainer, "TRL"};
  const auto cap =
      cap_of(trl, {"trl", "sft"}, {{"PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"}});
  EXPECT_EQ(cap.state, CapState::uncapped);
  ASSERT_EQ(cap.notes.size(), 1u);
  EXPECT_NE(cap.notes[0].find("expandable_segments:True"), std::string::npos);
}

TEST(OtherServerCaps, TgiAndTensorRtLlmFractions) {
  const auto tgi = cap_of(Classification{Engine::tgi, Role::server, "TGI"},
                          {"text-generation-launcher", "--cuda-memory-fraction", "0.3"});
  EXPECT_EQ(tgi.state, CapState::capped);
  EXPECT_DOUBLE_EQ(tgi.fraction.value(), 0.3);
  const auto trt = cap_of(Classification{Engine::tensorrt_llm, Role::server, "TensorRT-LLM"},
                          {"trtllm-serve", "m", "--kv_cache_free_gpu_memory_fraction", "0.5"});
  EXPECT_DOUBLE_EQ(trt.fraction.value(), 0.5);
}

}  // namespace
}  // namespace sparkops::workloads
