// The classifier on shapes the corpus does not cover: wrapping, collapsed newlines, comments,
// carriage-return updates, precedence, and bad input (empty, binary, huge, one endless line).

#include "ladder/oom_classifier.hpp"

#include <gtest/gtest.h>

#include "base/units.hpp"

namespace sparkops {
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
}  // namespace sparkops
