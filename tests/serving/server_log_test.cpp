// vLLM's start-up lines and the server texts of the corpus (tests/fixtures/serving/oom: copies of
// public reports, each with its source line).
#include <gtest/gtest.h>

#include <filesystem>

#include "serving/server_log.hpp"
#include "support/test_support.hpp"

namespace sparkops::serving {
namespace {
using test::fixture;
using test::slurp;

ServerLogFacts facts_of(std::string_view file) {
  return scan_server_log(slurp(fixture(std::string("serving/oom/") + std::string(file))));
}

TEST(ServerLog, VllmStartupAccountingAddsUp) {
  const auto f = facts_of("vllm-startup-memory-line-gpu-mem-util-0.87.txt");
  EXPECT_EQ(f.engine, ServeEngine::vllm);
  ASSERT_TRUE(f.free_gib && f.total_gib && f.fraction && f.requested_gib);
  EXPECT_DOUBLE_EQ(*f.free_gib, 110.34);
  EXPECT_DOUBLE_EQ(*f.total_gib, 121.69);
  EXPECT_DOUBLE_EQ(*f.fraction, 0.87);
  // The fraction is of the device total CUDA reports, not of what is free or available.
  EXPECT_NEAR(*f.fraction * *f.total_gib, *f.requested_gib, 0.005);
  ASSERT_TRUE(f.consumed_gib && f.activation_gib && f.cudagraph_gib);
  EXPECT_DOUBLE_EQ(*f.consumed_gib, 86.93);
  EXPECT_DOUBLE_EQ(*f.activation_gib, 3.6);
  EXPECT_DOUBLE_EQ(*f.cudagraph_gib, 0.26);
  // What is left for KV blocks: 105.87 - 86.93 - 3.6 - 0.26 = 15.08 GiB.
  EXPECT_NEAR(
      vllm_kv_pool(*f.total_gib, *f.fraction, *f.consumed_gib, *f.activation_gib, *f.cudagraph_gib),
      15.08, 0.01);
  EXPECT_FALSE(f.admission_refused);
}

// Found by fuzz_serving_args: "for consumed memory" without "GiB" before it looked the number up
// before npos (out of bounds). A phrase without its number is simply no figure.
TEST(ServerLog, PhraseWithoutItsUnitIsNoFigureNotAnOutOfBoundsRead) {
  EXPECT_FALSE(scan_server_log("nothing for consumed memory here\n").consumed_gib);
  EXPECT_FALSE(scan_server_log("for consumed memory").consumed_gib);
  const auto f = scan_server_log("model weights take 3.5 GiB for consumed memory\n");
  ASSERT_TRUE(f.consumed_gib);
  EXPECT_DOUBLE_EQ(*f.consumed_gib, 3.5);
}

TEST(ServerLog, VllmAdmissionRefusal) {
  const auto f = facts_of("vllm-startup-valueerror-free-memory-uma.txt");
  EXPECT_EQ(f.engine, ServeEngine::vllm);
  EXPECT_TRUE(f.admission_refused);
  EXPECT_DOUBLE_EQ(*f.free_gib, 74.9);
  EXPECT_DOUBLE_EQ(*f.total_gib, 142.5);
  EXPECT_NEAR(*f.fraction * *f.total_gib, *f.requested_gib, 0.005);
  const auto q = facts_of(
      "vllm_free_memory_less_than_desired_quoted_in_prose_router_relaunch_loop_circuit_breaker."
      "txt");
  EXPECT_TRUE(q.admission_refused);
  EXPECT_DOUBLE_EQ(*q.free_gib, 3.25);
  EXPECT_DOUBLE_EQ(*q.fraction, 0.96);
}

TEST(ServerLog, EveryServerTextNamesItsEngine) {
  const std::pair<const char*, ServeEngine> expected[] = {
      {"habana_gaudi_pt_devmem_allocation_failed_fatal_error_vllm_fp8_calibration_readme.txt",
       ServeEngine::vllm},
      {"llamacpp_cudamalloc_failed_oom_on_request_after_health_ok_bat_rem_comments_context_ladder."
       "txt",
       ServeEngine::llama_cpp},
      {"llamacpp_cudamalloc_oom_model_load_systemd_service.txt", ServeEngine::llama_cpp},
      {"ollama_llama_runner_no_longer_running_cuda_error_oom_cudamemcpyasync_via_lightrag.txt",
       ServeEngine::ollama},
      {"ollama_run_cli_model_requires_more_system_memory_raspberry_pi.txt", ServeEngine::ollama},
      {"riva_xavier_tensorrt_cuda_runtime_oom_failed_to_load_all_models_lfb_fragmentation.txt",
       ServeEngine::trtllm},
      {"vllm_free_memory_less_than_desired_gb10_121GiB_second_service.txt", ServeEngine::vllm},
      {"vllm_no_available_memory_for_cache_blocks_negative_kv.txt", ServeEngine::vllm},
      {"vllm_service_start_torch_oom_alongside_ollama_rtx3060_4060_summary.txt", ServeEngine::vllm},
      {"vllm_v1_wsl_docker_compose_acceleratorerror_cuda_oom_allocate_kv_cache_tensors.txt",
       ServeEngine::vllm},
  };
  std::size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(fixture("serving/oom"))) {
    (void)e;
    ++files;
  }
  EXPECT_EQ(files, std::size(expected) + 3);  // + the three vLLM texts pinned above
  for (const auto& [file, engine] : expected) {
    const auto f = facts_of(file);
    ASSERT_TRUE(f.engine.has_value()) << file;
    EXPECT_EQ(*f.engine, engine) << file;
  }
  const auto nb = facts_of("vllm_no_available_memory_for_cache_blocks_negative_kv.txt");
  EXPECT_TRUE(nb.no_cache_blocks);
  const auto ll = facts_of("llamacpp_cudamalloc_oom_model_load_systemd_service.txt");
  EXPECT_TRUE(ll.cuda_malloc_failed);
  EXPECT_DOUBLE_EQ(*ll.cuda_alloc_mib, 590.07);
  const auto ol = facts_of("ollama_run_cli_model_requires_more_system_memory_raspberry_pi.txt");
  ASSERT_TRUE(ol.ollama_required_gib.has_value());
}

TEST(ServerLog, KvShortfallAndEstimatedLength) {
  const auto f = scan_server_log(
      "ValueError: To serve at least one request with the models's max seq len (131072), (16.0 "
      "GiB KV cache is needed, which is larger than the available KV cache memory (8.5 GiB). "
      "Based on the available memory, the estimated maximum model length is 69632. Try "
      "increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the "
      "engine.");
  EXPECT_EQ(f.engine, ServeEngine::vllm);
  EXPECT_DOUBLE_EQ(*f.kv_needed_gib, 16.0);
  EXPECT_DOUBLE_EQ(*f.kv_available_gib, 8.5);
  EXPECT_EQ(f.estimated_max_model_len, 69632u);
}

TEST(ServerLog, LongLinesAndChunksStayBounded) {
  ServerLogScanner s;
  s.feed("Free memory on device (1");
  s.feed("0.5/20.0 GiB) on startup\n");
  s.feed(std::string(1 << 20, 'x'));
  s.feed("\nvllm\n");
  const auto f = s.finish();
  EXPECT_DOUBLE_EQ(*f.free_gib, 10.5);
  EXPECT_EQ(f.engine, ServeEngine::vllm);
}

}  // namespace
}  // namespace sparkops::serving
