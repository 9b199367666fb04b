// The classifier on shapes the corpus does not cover: wrapping, collapsed newlines, comments,
// carriage-return updates, precedence, and bad input (empty, binary, huge, one endless line).

#include "ladder/oom_classifier.hpp"

#include <gtest/gtest.h>

#include "base/units.hpp"

namespace sparkops::ladder {
namespace {

OomReport classify(std::string_view text) {
  auto r = classify_oom_text(text);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().detail);
  return r ? *r : OomReport{};
}

TEST(OomClassify, HardWrappedMidWordStillMatches) {
  const auto r = classify(
      "RuntimeError: CUDA out of mem\nory. Tried to alloc\nate 20.00 MiB (GPU 0; 7.79 GiB total "
      "cap\nacity; 6.55 GiB already allocated; 8.06 MiB free; 6.70 GiB reserved)");
  EXPECT_EQ(r.kind, OomKind::cuda_allocator);
  EXPECT_EQ(r.requested_bytes, 20 * kMiB);
  EXPECT_EQ(r.free_bytes, static_cast<std::uint64_t>(8.06 * kMiB + 0.5));
}

TEST(OomClassify, JsonEscapedTracebackReadsLikeTheOriginal) {
  const auto r = classify(
      R"({"level":"error","msg":"Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n    model = AutoModelForCausalLM.from_pretrained(name)\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."})");
  EXPECT_EQ(r.kind, OomKind::cuda_allocator);
  EXPECT_EQ(r.phase, OomPhase::load);
  EXPECT_EQ(r.requested_bytes, 2 * kGiB);
}

TEST(OomClassify, CarriageReturnProgressUpdatesGiveTheStepPhase) {
  const auto r = classify(
      "Loading checkpoint shards: 100%|##########| 4/4 [00:03<00:00,  1.2it/s]\n"
      "  1%|          | 1/1000 [00:02<40:00,  2.40s/it]\r  2%|          | 2/1000 [00:04<40:00,  "
      "2.40s/it]\r"
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB.");
  EXPECT_EQ(r.phase, OomPhase::step);
}

TEST(OomClassify, LoadMarkerInsideTheTracebackBeatsAnEarlierStepMarker) {
  const auto r = classify(
      "{'loss': 1.2, 'epoch': 0.5}\nTraceback (most recent call last):\n"
      "  File \"vllm/worker.py\", line 9, in profile_run\n"
      "  File \"model.py\", line 3, in forward\n"
      "torch.OutOfMemoryError: CUDA out of memory.");
  EXPECT_EQ(r.phase, OomPhase::load);
}

TEST(OomClassify, MarkersAfterTheErrorDoNotCount) {
  const auto r = classify("CUDA error: out of memory\nretry ok\n{'loss': 1.0, 'epoch': 1.0}\n");
  EXPECT_EQ(r.kind, OomKind::accelerator_runtime);
  EXPECT_EQ(r.phase, OomPhase::unknown);
}

// HF Trainer: trainer.train() -> _inner_training_loop -> evaluate -> evaluation_loop ->
// prediction_step (transformers/trainer.py). The eval frames are the last markers before the error.
TEST(OomClassify, EvaluationLoopInsideTrainingIsTheEvalPhase) {
  const auto r = classify(
      "{'loss': 1.2, 'epoch': 0.5}\nTraceback (most recent call last):\n"
      "  File \"train.py\", line 40, in <module>\n    trainer.train()\n"
      "  File \"transformers/trainer.py\", line 2279, in _inner_training_loop\n"
      "  File \"transformers/trainer.py\", line 4105, in evaluation_loop\n"
      "  File \"transformers/trainer.py\", line 4323, in prediction_step\n"
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.");
  EXPECT_EQ(r.phase, OomPhase::eval);
  EXPECT_EQ(r.phase_evidence, "File \"transformers/trainer.py\", line 4323, in prediction_step");
}

TEST(OomClassify, DescribedEvalBarIsTheEvalPhase) {
  const auto r = classify(
      " 40%|####      | 40/100 [01:00<01:30,  1.50s/it]\n"
      "Evaluating:  50%|#####     | 5/10 [00:01<00:01,  3.20it/s]\n"
      "RuntimeError: CUDA error: out of memory\n");
  EXPECT_EQ(r.phase, OomPhase::eval);
}

// HF Trainer logs "Saving model checkpoint to DIR" (trainer.py _save_checkpoint) before writing.
TEST(OomClassify, CheckpointSaveIsTheSavePhase) {
  const auto r = classify(
      "{'loss': 0.9, 'grad_norm': 1.1, 'learning_rate': 1e-05, 'epoch': 1.0}\n"
      "[INFO|trainer.py:3801] 2026-11-30 10:00:00,000 >> Saving model checkpoint to "
      "out/checkpoint-500\n"
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB.");
  EXPECT_EQ(r.phase, OomPhase::save);
  EXPECT_NE(r.phase_evidence.find("Saving model checkpoint to out/checkpoint-500"),
            std::string::npos);
}

TEST(OomClassify, TheLastMarkerBeforeTheFailureWins) {
  // A save that finished, then training resumed: the step is what failed.
  const auto r = classify(
      "Saving model checkpoint to out/checkpoint-500\n"
      "{'loss': 0.8, 'epoch': 1.1}\n"
      "RuntimeError: CUDA error: out of memory\n");
  EXPECT_EQ(r.phase, OomPhase::step);
  EXPECT_EQ(r.phase_evidence, "{'loss': 0.8, 'epoch': 1.1}");
}

TEST(OomClassify, PhaseEvidenceIsCappedWithoutSplittingACharacter) {
  std::string line = "Loading checkpoint shards ";
  for (int i = 0; i < 200; ++i) line += "\xc3\xa9";  // é, two bytes each
  const auto r = classify(line + "\nRuntimeError: CUDA error: out of memory\n");
  EXPECT_EQ(r.phase, OomPhase::load);
  EXPECT_LE(r.phase_evidence.size(), kPhaseEvidenceMax);
  EXPECT_GT(r.phase_evidence.size(), kPhaseEvidenceMax - 2);
  EXPECT_EQ(r.phase_evidence.rfind("Loading checkpoint shards ", 0), 0U);
  // Every byte after the ASCII prefix is a whole two-byte character.
  EXPECT_EQ((r.phase_evidence.size() - 26) % 2, 0U);
}

TEST(OomClassify, PhaseEvidenceSurvivesTheWindowBeingTrimmed) {
  // The marker is ~59 KiB (dense) before the error, inside the 64 KiB phase window, and the
  // classifier's 64 KiB window is trimmed in between (10 KiB of output came before the marker).
  std::string text;
  while (text.size() < 10 * 1024) text += "some unrelated output line without markers\n";
  text += "Loading checkpoint shards: 2 of 4\n";
  while (text.size() < 80 * 1024) text += "some unrelated output line without markers\n";
  text += "RuntimeError: CUDA error: out of memory\n";
  OomClassifier c;
  for (std::size_t at = 0; at < text.size(); at += 4096)
    c.feed(std::string_view(text).substr(at, 4096));
  const auto r = c.finish();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->phase, OomPhase::load);
  EXPECT_EQ(r->phase_evidence, "Loading checkpoint shards: 2 of 4");
}

TEST(OomClassify, AProseMentionOfCudaOutOfMemoryIsNotTheAllocatorMessage) {
  EXPECT_EQ(classify("The job fails with CUDA out of memory when the cache is full.\n").kind,
            OomKind::not_oom);
  EXPECT_EQ(classify("RuntimeError: CUDA out of memory.\n").kind, OomKind::cuda_allocator);
  EXPECT_EQ(classify("CUDA out of memory. Tried to allocate 20.00 MiB\n").kind,
            OomKind::cuda_allocator);
}

TEST(OomClassify, NvMapError12CountsOnlyWithAStatedFailure) {
  EXPECT_EQ(classify("NvMapMemAllocInternalTagged: 1075072515 error 12\n").kind, OomKind::not_oom);
  EXPECT_EQ(classify("test: FAILED\nNvMapMemAllocInternalTagged: 1075072515 error 12\n").kind,
            OomKind::accelerator_runtime);
}

TEST(OomClassify, OnlyXid31IsTheDriverFault) {
  const auto fault = classify(
      "NVRM: Xid (PCI:0000:08:00): 31, Ch 0000003b, intr 10000000. MMU Fault: ENGINE GRAPHICS\n");
  EXPECT_EQ(fault.kind, OomKind::driver);
  EXPECT_FALSE(fault.memory_exhausted);
  EXPECT_EQ(classify("NVRM: Xid (PCI:0000:08:00): 69, Class Error: ChId 003b\n").kind,
            OomKind::not_oom);
  EXPECT_EQ(classify("NVRM: Xid (PCI:0000:08:00): 310, x\n").kind, OomKind::not_oom);
}

TEST(OomClassify, AStatedStartupFailureAfterTheErrorIsTheLoadPhase) {
  const auto r = classify(
      "{'loss': 1.0}\nError Code 1: Cuda Runtime (out of memory)\n"
      "error: creating server: Internal - failed to load all models\n");
  EXPECT_EQ(r.kind, OomKind::accelerator_runtime);
  EXPECT_EQ(r.phase, OomPhase::load);
}

TEST(OomClassify, KernelKillOutranksTheRuntimeMessage) {
  const auto r = classify(
      "RuntimeError: CUDA error: out of memory\n"
      "[ 1234.5] Out of memory: Killed process 4242 (python3) total-vm:1kB\n");
  EXPECT_EQ(r.kind, OomKind::host_oom_killer);
  EXPECT_EQ(r.evidence, Evidence::stated);
  EXPECT_EQ(r.process_name, "python3");
}

TEST(OomClassify, CgroupKillOutranksTheGlobalWordingItContains) {
  const auto r =
      classify("Memory cgroup out of memory: Killed process 7 (ollama runner) total-vm:1kB");
  EXPECT_EQ(r.kind, OomKind::cgroup_oom_killer);
  EXPECT_EQ(r.process_name, "ollama runner");
}

TEST(OomClassify, AllocatorOutranksAnInferredSigkill) {
  const auto r =
      classify("worker exited with code -9\ntorch.OutOfMemoryError: CUDA out of memory.");
  EXPECT_EQ(r.kind, OomKind::cuda_allocator);
}

TEST(OomClassify, DriverLineCountsOnlyAlone) {
  EXPECT_EQ(classify("NVRM: Check failed: Out of memory [NV_ERR_NO_MEMORY] (0x00000051)").kind,
            OomKind::driver);
  EXPECT_EQ(classify("NVRM: [NV_ERR_NO_MEMORY]\nCUDA error: out of memory").kind,
            OomKind::accelerator_runtime);
}

TEST(OomClassify, LookAlikesAreNotOom) {
  for (const std::string_view text :
       {"10% for the buffer to avoid OOM", "exit code 1", "exitcode: -90",
        "torch.AcceleratorError: CUDA error: an illegal memory access",
        "Free memory on device (110.34/121.69 GiB) on startup. Desired GPU memory utilization is "
        "(0.87, 105.87 GiB).",
        "max_iterations 5", "out of memory"}) {
    EXPECT_EQ(classify(text).kind, OomKind::not_oom) << text;
  }
}

TEST(OomClassify, BitsandbytesFramesAreFlagged) {
  const auto r = classify(
      "  File \"/venv/lib/python3.11/site-packages/bitsandbytes/functional.py\", line 1, in "
      "dequantize_4bit\n"
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 500.00 MiB.");
  EXPECT_TRUE(r.bitsandbytes_on_stack);
}

TEST(OomBadInput, EmptyInputIsAClearError) {
  const auto r = classify_oom_text("");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, Errc::invalid_argument);
}

TEST(OomBadInput, BinaryJunkIsAClearError) {
  std::string junk(4096, '\0');
  for (std::size_t i = 0; i < junk.size(); i += 3) junk[i] = static_cast<char>(i * 7);
  const auto r = classify_oom_text(junk);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, Errc::malformed);
  EXPECT_FALSE(classify_oom_text("\x1f\x8b\x08\x00rest").has_value());
}

TEST(OomBadInput, HugeStreamStaysInBoundedMemory) {
  OomClassifier classifier;
  const std::string line =
      "{'loss': 1.234, 'grad_norm': 0.5, 'learning_rate': 2e-05, 'epoch': 0.01}\n";
  std::string chunk;
  while (chunk.size() < 1024 * 1024) chunk += line;
  std::size_t max_buffered = 0;
  for (int i = 0; i < 16; ++i) {  // 16 MiB of training log
    classifier.feed(chunk);
    max_buffered = std::max(max_buffered, classifier.buffered_bytes());
  }
  classifier.feed("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB.\n");
  auto r = classifier.finish();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->kind, OomKind::cuda_allocator);
  EXPECT_EQ(r->phase, OomPhase::step);
  EXPECT_GT(classifier.bytes_seen(), 16U * 1024 * 1024);
  EXPECT_LT(max_buffered, 2U * 1024 * 1024);
}

TEST(OomBadInput, TenMegabyteLineWithoutNewlineStaysInBoundedMemory) {
  OomClassifier classifier;
  const std::string piece(1024 * 1024, 'x');
  std::size_t max_buffered = 0;
  for (int i = 0; i < 10; ++i) {
    classifier.feed(piece);
    max_buffered = std::max(max_buffered, classifier.buffered_bytes());
  }
  auto r = classifier.finish();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->kind, OomKind::not_oom);
  EXPECT_LT(max_buffered, 2U * 1024 * 1024);
}

TEST(OomBadInput, SignalSplitAcrossFeedsIsFound) {
  OomClassifier classifier;
  classifier.feed("torch.OutOfMemoryError: CUDA out of me");
  classifier.feed("mory. Tried to allocate 3");
  classifier.feed(".00 GiB.");
  auto r = classifier.finish();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->kind, OomKind::cuda_allocator);
  EXPECT_EQ(r->requested_bytes, 3 * kGiB);
}

}  // namespace
}  // namespace sparkops::ladder
