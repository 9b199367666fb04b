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

namespace sparkops {
namespace {

struct Label {
  std::string file;
  std::string kind;
  std::string phase;
};

std::vector<Label> read_labels(const std::filesystem::path& csv) {
  std::vector<Label> labels;
  const auto text = test::slurp(csv);
  for (const auto line : split_lines(text)) {
    const auto fields = split(trim(line), ',');
    if (fields.size() != 3 || fields[0] == "file") continue;
    labels.push_back({std::string(fields[0]), std::string(fields[1]), std::string(fields[2])});
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

}  // namespace
}  // namespace sparkops
