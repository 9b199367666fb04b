// Every labelled file of the shared OOM corpus (copied under tests/fixtures/oom) must classify as
// its label says, and training logs without a failure must say not_oom.

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/text.hpp"
#include "base/units.hpp"
#include "ladder/oom_classifier.hpp"
#include "support/test_support.hpp"

namespace sparkops::ladder {
namespace {

struct Label {
  std::string file;
  std::string kind;
  std::string phase;
};

// The labels carry quoted notes with commas, so they are read as CSV (RFC 4180), not split.
std::vector<Label> read_labels(const std::filesystem::path& csv) {
  std::vector<Label> labels;
  for (auto& row : test::read_csv(csv)) {
    labels.push_back({row.at("file"), row.at("kind"), row.at("phase")});
  }
  return labels;
}

OomReport classify_fixture(const std::string& relative) {
  auto report = classify_oom_file(test::fixture(relative));
  EXPECT_TRUE(report.has_value()) << relative << ": " << (report ? "" : report.error().detail);
  return report ? *report : OomReport{};
}

void expect_labels(const std::string& labels_file) {
  const auto labels = read_labels(test::fixture("oom/" + labels_file));
  ASSERT_FALSE(labels.empty());
  for (const auto& label : labels) {
    const auto report = classify_fixture("oom/corpus/" + label.file);
    EXPECT_EQ(oom_kind_name(report.kind), label.kind) << label.file;
    EXPECT_EQ(oom_phase_name(report.phase), label.phase) << label.file;
    // A phase is always shown with the line that decided it.
    EXPECT_EQ(report.phase_evidence.empty(), report.phase == OomPhase::unknown) << label.file;
  }
}

TEST(OomCorpus, EveryLabelledFileClassifiesAsLabelled) {
  expect_labels("corpus/LABELS.csv");
}

TEST(OomCorpus, KernelAndServerTextsClassifyAsLabelled) {
  expect_labels("EXTRA_LABELS.csv");
}

TEST(OomCorpus, TrainingLogsWithoutFailureAreNotOom) {
  for (const auto& entry : std::filesystem::directory_iterator(test::fixture("oom/not_oom"))) {
    auto report = classify_oom_file(entry.path());
    ASSERT_TRUE(report.has_value()) << entry.path();
    EXPECT_EQ(report->kind, OomKind::not_oom) << entry.path() << " " << report->evidence_text;
  }
}

TEST(OomCorpus, LabelledFilesStillClassifyWithoutTheirProvenanceHeader) {
  const auto labels = read_labels(test::fixture("oom/corpus/LABELS.csv"));
  for (const auto& label : labels) {
    auto text = test::slurp(test::fixture("oom/corpus/" + label.file));
    text.erase(0, text.find('\n') + 1);  // the first line is the corpus's "# source: ..." note
    auto report = classify_oom_text(text);
    ASSERT_TRUE(report.has_value()) << label.file;
    EXPECT_EQ(oom_kind_name(report->kind), label.kind) << label.file;
    EXPECT_EQ(oom_phase_name(report->phase), label.phase) << label.file;
  }
}

// Extraction pins: what each wording states.

TEST(OomExtract, NewestTorchWordingGivesRequestCapacityAndFree) {
  const auto r = classify_fixture(
      "oom/corpus/hf_from_pretrained_load_oom_during_checkpoint_shards_gemma3.txt");
  EXPECT_EQ(r.requested_bytes, static_cast<std::uint64_t>(3.75 * kGiB));
  EXPECT_EQ(r.capacity_bytes, static_cast<std::uint64_t>(22.05 * kGiB + 0.5));
  EXPECT_EQ(r.free_bytes, static_cast<std::uint64_t>(3.17 * kGiB + 0.5));
  EXPECT_FALSE(r.bitsandbytes_on_stack);
}

TEST(OomExtract, Torch20ParenthesisedWordingGivesRequestCapacityAndFree) {
  const auto r =
      classify_fixture("oom/corpus/torch20_cuda_oom_old_parenthesized_wording_svd_decode.txt");
  EXPECT_EQ(r.requested_bytes, static_cast<std::uint64_t>(4.43 * kGiB + 0.5));
  EXPECT_EQ(r.capacity_bytes, static_cast<std::uint64_t>(23.48 * kGiB + 0.5));
  EXPECT_EQ(r.free_bytes, static_cast<std::uint64_t>(3.75 * kGiB));
}

TEST(OomExtract, DataParallelWrapperKeepsTheInnerMessagesFacts) {
  const auto r =
      classify_fixture("oom/corpus/torch_newest_oom_wording_dataparallel_jupyter_midtraining.txt");
  EXPECT_EQ(r.requested_bytes, 750 * kMiB);
  EXPECT_EQ(r.capacity_bytes, static_cast<std::uint64_t>(14.57 * kGiB + 0.5));
  EXPECT_EQ(r.free_bytes, static_cast<std::uint64_t>(426.75 * kMiB));
}

TEST(OomExtract, MpsSizesAreBinaryAsPyTorchFormatsThem) {
  const auto r =
      classify_fixture("oom/corpus/mps_backend_oom_mid_training_sentence_transformers_fit.txt");
  EXPECT_EQ(r.requested_bytes, 192 * kMiB);
  EXPECT_EQ(r.capacity_bytes, static_cast<std::uint64_t>(18.13 * kGiB + 0.5));
}

TEST(OomExtract, GgmlWrappedAllocationGivesTheRequest) {
  const auto r =
      classify_fixture("oom/corpus/llamacpp_cudamalloc_oom_model_load_systemd_service.txt");
  EXPECT_EQ(r.requested_bytes, static_cast<std::uint64_t>(590.07 * kMiB + 0.5));
}

TEST(OomExtract, VllmWrappedAdmissionGivesFreeTotalAndDesired) {
  const auto r = classify_fixture(
      "oom/corpus/vllm_free_memory_less_than_desired_gb10_121GiB_second_service.txt");
  EXPECT_EQ(r.free_bytes, static_cast<std::uint64_t>(2.6 * kGiB + 0.5));
  EXPECT_EQ(r.capacity_bytes, static_cast<std::uint64_t>(121.63 * kGiB + 0.5));
  EXPECT_EQ(r.requested_bytes, static_cast<std::uint64_t>(9.73 * kGiB + 0.5));
}

TEST(OomExtract, OllamaGivesRequiredAndAvailable) {
  const auto r = classify_fixture(
      "oom/corpus/ollama_run_cli_model_requires_more_system_memory_raspberry_pi.txt");
  EXPECT_EQ(r.requested_bytes, 44 * kGiB);
  EXPECT_EQ(r.free_bytes, static_cast<std::uint64_t>(7.6 * kGiB + 0.5));
}

TEST(OomExtract, KernelKillNamesTheVictim) {
  const auto r = classify_fixture("oom/corpus/dmesg-oom-kill-global-unified-memory.txt");
  EXPECT_EQ(r.process_name, "lmcache");
  EXPECT_EQ(r.process_pid, 3742074U);
  const auto memcg = classify_fixture("oom/corpus/kernel_cgroup_oom_journalctl_python_pytest.txt");
  EXPECT_EQ(memcg.process_name, "python");
  EXPECT_EQ(memcg.process_pid, 1027654U);
}

TEST(OomExtract, LauncherSigkillIsInferredAndNamesTheWorker) {
  const auto r = classify_fixture(
      "oom/corpus/torchrun_childfailederror_exitcode_minus9_sigkill_llama2_load.txt");
  EXPECT_EQ(r.evidence, Evidence::inferred);
  EXPECT_EQ(r.process_pid, 11127U);
  EXPECT_EQ(r.process_name, "python");
}

TEST(OomExtract, NpuAllocatorWrappedInADocstringGivesRequestCapacityAndFree) {
  const auto r = classify_fixture(
      "oom/corpus/ascend_npu_out_of_memory_parenthesized_torch_npu_training_chinese_docstring.txt");
  EXPECT_EQ(r.evidence_text, "NPU out of memory");
  EXPECT_EQ(r.requested_bytes, static_cast<std::uint64_t>(31.67 * kGiB + 0.5));
  EXPECT_EQ(r.capacity_bytes, 32 * kGiB);
  EXPECT_EQ(r.free_bytes, static_cast<std::uint64_t>(24.39 * kGiB + 0.5));
}

TEST(OomExtract, GaudiDevmemGivesTheRequestInBytes) {
  const auto r = classify_fixture(
      "oom/corpus/habana_gaudi_pt_devmem_allocation_failed_fatal_error_vllm_fp8_calibration_readme"
      ".txt");
  EXPECT_EQ(r.evidence_text, "Gaudi PT_DEVMEM Allocation failed");
  EXPECT_EQ(r.requested_bytes, 939524096U);
}

TEST(OomExtract, TensorRtRuntimeOutranksTheProseMention) {
  // "Riva fails with **CUDA out of memory** when ..." is the author's words; the error is
  // TensorRT's "Cuda Runtime (out of memory)", and "failed to load" after it says load.
  const auto r = classify_fixture(
      "oom/corpus/riva_xavier_tensorrt_cuda_runtime_oom_failed_to_load_all_models_lfb_fragmentation"
      ".txt");
  EXPECT_EQ(r.evidence_text, "TensorRT: Cuda Runtime (out of memory)");
  EXPECT_EQ(r.phase_evidence,
            "failed to load 'riva-trt-conformer-en-US-asr-streaming-am-streaming'");
}

TEST(OomExtract, Xid31IsADriverFaultNotExhaustion) {
  const auto r = classify_fixture(
      "oom/corpus/driver_nvrm_xid31_mmu_fault_illegal_memory_access_preflight_a100_modal_not_oom"
      ".txt");
  EXPECT_EQ(r.kind, OomKind::driver);
  EXPECT_FALSE(r.memory_exhausted);
  EXPECT_FALSE(is_memory_failure(r));
  // The job ended at the application's last report of the fault, inside the preflight check.
  EXPECT_EQ(r.phase_evidence,
            "[PREFLIGHT] \xe2\x9c\x97 Failed on test batch: CUDA error: an illegal memory access "
            "was encountered");
}

TEST(OomExtract, NegativesNameTheirNearMiss) {
  const auto illegal = classify_fixture(
      "oom/corpus/"
      "NEGATIVE_vllm_acceleratorerror_illegal_memory_access_mtp_spec_decode_not_oom.txt");
  EXPECT_NE(illegal.near_miss.find("cudaErrorIllegalAddress"), std::string::npos);
  const auto nvmap = classify_fixture(
      "oom/corpus/"
      "NEGATIVE_jetson_orin_nvmap_error12_harmless_vllm_startup_warnings_safe_to_ignore.txt");
  EXPECT_NE(nvmap.near_miss.find("NvMap error 12"), std::string::npos);
  EXPECT_EQ(nvmap.phase_evidence, "During startup you may see:");
  const auto segv = classify_fixture(
      "oom/corpus/NEGATIVE_gb10_libsndfile_sigsegv_exit139_after_render_looks_like_model_died.txt");
  EXPECT_NE(segv.near_miss.find("SIGSEGV"), std::string::npos);
}

}  // namespace
}  // namespace sparkops::ladder
