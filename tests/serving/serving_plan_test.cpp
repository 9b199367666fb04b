#include <gtest/gtest.h>

#include <cmath>

#include "base/units.hpp"
#include "models/catalogue.hpp"
#include "serving/serving_plan.hpp"

namespace sparkops::serving {
namespace {

constexpr std::uint64_t kGb10CudaTotal = 130663738490ULL;  // 121.69 GiB, as vLLM logs it on GB10

models::ResolvedModel catalogue_model(std::string_view name) {
  models::ResolvedModel m;
  const auto* e = models::find_in_catalogue(name);
  EXPECT_NE(e, nullptr);
  m.shape.name = e->name;
  m.shape.arch = e->arch;
  m.shape.params = models::count_params(e->arch);
  return m;
}

ServingPlan plan_of(std::string_view model, ServeEngine engine, std::vector<std::string> argv,
                    host::EnvList env = {}, std::uint64_t budget = 100ULL << 30) {
  auto args = parse_serve_args(engine, argv, env, kGb10CudaTotal);
  EXPECT_TRUE(args.has_value());
  ServingInput in;
  in.model = catalogue_model(model);
  in.args = *args;
  in.device_total_bytes = kGb10CudaTotal;
  in.budget_bytes = budget;
  in.budget_given = true;
  auto p = make_serving_plan(in);
  EXPECT_TRUE(p.has_value()) << p.error().detail;
  return *p;
}

std::uint64_t term(const ServingPlan& p, std::string_view name) {
  for (const auto& t : p.terms) {
    if (t.name == name) return t.bytes;
  }
  ADD_FAILURE() << "no term " << name;
  return 0;
}

TEST(ServingPlan, VllmReservesItsFractionOfTheDeviceTotal) {
  const auto p = plan_of("Qwen3-32B", ServeEngine::vllm,
                         {"--max-model-len", "32768", "--gpu-memory-utilization", "0.8"});
  ASSERT_TRUE(p.claim_bytes.has_value());
  EXPECT_EQ(*p.claim_bytes, static_cast<std::uint64_t>(std::llround(0.8 * kGb10CudaTotal)));
  // KV = requested - weights - CUDA context - activation peak - CUDA graphs.
  EXPECT_EQ(p.kv_cache_bytes, *p.claim_bytes - term(p, "weights") - term(p, "cuda_context") -
                                  term(p, "activation_peak") - term(p, "cuda_graphs"));
  EXPECT_EQ(p.footprint_bytes, *p.claim_bytes + term(p, "host_processes"));
  EXPECT_DOUBLE_EQ(p.kv_bytes_per_token, 262144);
  EXPECT_NEAR(p.concurrency, static_cast<double>(p.kv_cache_bytes) / (32768.0 * 262144), 1e-9);
  // The largest --max-model-len is what one sequence can take of the pool (capped at the model's).
  EXPECT_EQ(*p.largest_context, std::min<std::uint64_t>(p.kv_cache_bytes / 262144, 40960));
  EXPECT_EQ(p.claim, ClaimKind::device_fraction);
}

TEST(ServingPlan, VllmShortfallWhenOneSequenceDoesNotFit) {
  // Llama-3.1-70B bf16 (~131 GiB) cannot even load at 0.5; at 0.95 of 121.69 GiB the weights alone
  // exceed the reservation: the KV pool is empty and the plan says so.
  const auto p = plan_of("Llama-3.1-8B", ServeEngine::vllm,
                         {"--max-model-len", "131072", "--gpu-memory-utilization", "0.2"});
  EXPECT_GT(p.kv_shortfall_bytes, 0);
  EXPECT_LT(*p.largest_context, 131072u);
  EXPECT_GT(*p.largest_context, 0u);
}

TEST(ServingPlan, FractionTooLargeForTheBudgetSizesAtTheBudgetsFraction) {
  const auto p =
      plan_of("Qwen3-8B", ServeEngine::vllm, {"--max-model-len", "32768"}, {}, 60ULL << 30);
  EXPECT_EQ(p.verdict, plan::Verdict::wont_fit);
  ASSERT_TRUE(p.largest_fraction.has_value());
  EXPECT_LE(*p.largest_fraction * static_cast<double>(kGb10CudaTotal) +
                static_cast<double>(term(p, "host_processes")),
            static_cast<double>(60ULL << 30));
  ASSERT_TRUE(p.largest_context_at.has_value());
  EXPECT_DOUBLE_EQ(*p.largest_context_at, *p.largest_fraction);
}

TEST(ServingPlan, LlamaCppHoldsTheWholeContextOfEverySlot) {
  const auto p = plan_of("Llama-3.1-8B", ServeEngine::llama_cpp, {"-c", "32768", "-np", "4"});
  EXPECT_EQ(p.kv_cache_bytes, 32768ULL * 131072);
  EXPECT_EQ(p.context, 8192u);  // per slot
  EXPECT_EQ(p.footprint_bytes, term(p, "weights") + term(p, "kv_cache") +
                                   term(p, "compute_buffer") + term(p, "cuda_context"));
  // The largest -c fits the budget and one more token would not ... up to the model's 4 x 128k.
  EXPECT_LE(*p.largest_context, 131072u * 4);
  // gpt-oss: the sliding layers keep n_swa x n_seq + n_ubatch cells (llama_kv_cache_iswa).
  const auto g = plan_of("gpt-oss-20b", ServeEngine::llama_cpp, {"-c", "65536", "-np", "2"});
  const double per_layer = 8 * 64 * 2 * 2.0;
  EXPECT_EQ(g.kv_cache_bytes,
            static_cast<std::uint64_t>(per_layer * (12 * 65536.0 + 12 * (128 * 2 + 512))));
}

TEST(ServingPlan, OllamaMultipliesNumCtxByParallel) {
  const auto p =
      plan_of("Llama-3.1-8B", ServeEngine::ollama, {},
              {{"OLLAMA_NUM_PARALLEL", "4"}, {"OLLAMA_CONTEXT_LENGTH", "8192"}}, 40ULL << 30);
  EXPECT_EQ(p.kv_cache_bytes, 8192ULL * 4 * 131072);
  EXPECT_EQ(p.claim, ClaimKind::on_demand);
  ASSERT_TRUE(p.largest_parallel.has_value());
  // At the largest parallelism it fits; one more slot does not.
  auto more = plan_of("Llama-3.1-8B", ServeEngine::ollama, {},
                      {{"OLLAMA_NUM_PARALLEL", std::to_string(*p.largest_parallel + 1)},
                       {"OLLAMA_CONTEXT_LENGTH", "8192"}},
                      40ULL << 30);
  auto at = plan_of("Llama-3.1-8B", ServeEngine::ollama, {},
                    {{"OLLAMA_NUM_PARALLEL", std::to_string(*p.largest_parallel)},
                     {"OLLAMA_CONTEXT_LENGTH", "8192"}},
                    40ULL << 30);
  EXPECT_LE(at.footprint_bytes, 40ULL << 30);
  EXPECT_GT(more.footprint_bytes, 40ULL << 30);
}

TEST(ServingPlan, SglangKeepsActivationsOutsideItsStaticFraction) {
  const auto p = plan_of("Qwen3-8B", ServeEngine::sglang,
                         {"--context-length", "32768", "--mem-fraction-static", "0.5"});
  EXPECT_EQ(*p.claim_bytes, static_cast<std::uint64_t>(std::llround(0.5 * kGb10CudaTotal)));
  EXPECT_EQ(p.kv_cache_bytes, *p.claim_bytes - term(p, "weights") - term(p, "cuda_context"));
  EXPECT_EQ(p.footprint_bytes, *p.claim_bytes + term(p, "activation_peak") +
                                   term(p, "cuda_graphs") + term(p, "host_processes"));
}

TEST(ServingPlan, UnknownContextIsAnError) {
  auto args = parse_serve_args(ServeEngine::vllm, {}, {}, kGb10CudaTotal);
  ServingInput in;
  in.model = catalogue_model("Qwen3-8B");
  in.model.shape.arch.max_context = 0;
  in.args = *args;
  in.device_total_bytes = kGb10CudaTotal;
  in.budget_bytes = 100ULL << 30;
  auto p = make_serving_plan(in);
  ASSERT_FALSE(p.has_value());
  EXPECT_NE(p.error().detail.find("context"), std::string::npos);
}

}  // namespace
}  // namespace sparkops::serving
