#include <gtest/gtest.h>

#include "models/catalogue.hpp"
#include "plan/frameworks.hpp"
#include "plan/plan.hpp"
#include "plan_fixtures.hpp"

namespace sparkops::plan {
namespace {

using fixtures::shape;

constexpr double kGiB = 1073741824.0;

RunConfig anchor_70b_qlora() {
  RunConfig r;
  r.method = Method::qlora;
  r.batch = 1;
  r.seq = 512;
  return r;
}

// The skill's anchor: 70B QLoRA ≈ 40 GB (data/anchors.json: batch 1, packing 512, defaults
// otherwise).
TEST(Estimator, SeventyBQloraWithinTenPercentOfTheAnchor) {
  const auto e = estimate(shape("Llama-3.1-70B"), anchor_70b_qlora());
  const double gib = static_cast<double>(e.train_peak_allocated_bytes) / kGiB;
  EXPECT_NEAR(gib, 40.0, 4.0);
  // docs/domain.md: ~35 GB of NF4 linears + ~4 GB bf16 embeddings (decimal GB).
  EXPECT_NEAR(static_cast<double>(e.terms.weights) / 1e9, 39.5, 0.5);
}

TEST(Estimator, LoraAdapterCostsSixteenBytesPerParameter) {
  RunConfig r;  // defaults: lora r16 all-linear, adamw
  const auto e = estimate(shape("Llama-3.1-8B"), r);
  EXPECT_EQ(e.trainable_params, 41'943'040u);
  EXPECT_EQ(e.terms.adapter, 4u * 41'943'040u);
  EXPECT_EQ(e.terms.gradients, 4u * 41'943'040u);
  EXPECT_EQ(e.terms.optimizer, 8u * 41'943'040u);
  EXPECT_EQ(e.terms.weights, 2u * 8'030'261'248u);
}

TEST(Estimator, FullBf16AdamwKeepsBf16StatesAndMixedAddsMaster) {
  RunConfig r;
  r.method = Method::full;
  const auto s = shape("Llama-3.2-1B");
  const auto bf16 = estimate(s, r);
  EXPECT_EQ(bf16.terms.optimizer, 4u * s.params.total);
  EXPECT_EQ(bf16.terms.master, 0u);
  r.precision = Precision::mixed;
  const auto mixed = estimate(s, r);
  EXPECT_EQ(mixed.terms.optimizer, 8u * s.params.total);
  EXPECT_EQ(mixed.terms.master, 4u * s.params.total);
  r.optim = Optim::paged_adamw8bit;
  EXPECT_EQ(estimate(s, r).terms.optimizer, 2u * s.params.total);
}

TEST(Estimator, ChunkedLossShrinksLogitsAndCheckpointingShrinksActivations) {
  RunConfig r;
  const auto s = shape("Llama-3.1-8B");
  const auto base = estimate(s, r);
  r.loss = LossKind::chunked;
  // LitGPT's chunked cross-entropy keeps every chunk's bf16 log-softmax (2 B/vocab/token) instead
  // of the fp32 one (4), and its backward works one 128-token chunk at a time.
  const auto chunked = estimate(s, r);
  EXPECT_LT(chunked.terms.logits * 19, base.terms.logits * 10);
  EXPECT_LT(chunked.train_peak_allocated_bytes, base.train_peak_allocated_bytes);
  r.grad_ckpt = GradCkpt::none;
  EXPECT_GT(estimate(s, r).terms.activations, 5 * base.terms.activations);
}

TEST(Estimator, EagerAttentionAddsQuadraticScores) {
  RunConfig r;
  r.grad_ckpt = GradCkpt::none;
  const auto s = shape("Llama-3.1-8B");
  const auto flash = estimate(s, r);
  r.attn = Attn::eager;
  // Eager keeps softmax's fp32 output and the bf16 probabilities (6 B · heads · seq per token per
  // layer); SDPA instead keeps its output (2·q) and the fp32 log-sum-exp (4·heads).
  const std::uint64_t per_token_layer = 6ull * 32 * 2048 - (2ull * 4096 + 4ull * 32);
  EXPECT_EQ(estimate(s, r).terms.activations - flash.terms.activations,
            per_token_layer * 2048 * 32);
}

TEST(Estimator, QloraLoadHoldsTheBf16Shard) {
  RunConfig r = anchor_70b_qlora();
  const auto e = estimate(shape("Llama-3.1-70B"), r, 4'000'000'000ull);
  EXPECT_EQ(e.load_peak_pool_bytes,
            e.terms.weights + 8'000'000'000ull + e.terms.cuda_context + e.terms.host_process);
  r.method = Method::lora;
  const auto l = estimate(shape("Llama-3.1-70B"), r, 4'000'000'000ull);
  EXPECT_EQ(l.load_peak_pool_bytes,
            l.terms.weights + 4'000'000'000ull + l.terms.cuda_context + l.terms.host_process);
}

TEST(Estimator, PoolPeakAddsReserveContextAndTheHostSide) {
  RunConfig r;
  r.host.dataset_bytes = 3'000'000'000ull;
  r.host.dataloader_workers = 4;
  const auto e = estimate(shape("Qwen2.5-7B"), r);
  EXPECT_EQ(e.terms.dataset, 3'000'000'000ull);
  EXPECT_EQ(e.terms.dataloader_workers, 4 * r.host.worker_bytes);
  EXPECT_EQ(e.terms.host_process, r.host.process_bytes);
  EXPECT_EQ(e.train_peak_pool_bytes, e.train_peak_allocated_bytes + e.terms.allocator_reserve +
                                         e.terms.cuda_context + e.terms.host_process +
                                         e.terms.dataset + e.terms.dataloader_workers);
  EXPECT_GT(e.terms.allocator_reserve, 0u);
  // The checkpoint's cached pages are shown, not added: reclaimable.
  EXPECT_EQ(e.terms.page_cache, e.params * 2);
  r.host.page_cache_resident = false;
  EXPECT_EQ(estimate(shape("Qwen2.5-7B"), r).terms.page_cache, 0u);
}

// The cuBLAS workspaces go through torch's allocator: in allocated, one per thread's handle.
TEST(Estimator, CublasWorkspacesAreAllocatedPerThread) {
  RunConfig r;
  const auto hopper = estimate(shape("Qwen2.5-7B"), r);
  EXPECT_EQ(hopper.terms.workspaces, 2 * kCublasWorkspaceHopperBytes + kCublasLtWorkspaceBytes);
  r.cublas_workspace_bytes = kCublasWorkspaceOlderBytes;
  const auto older = estimate(shape("Qwen2.5-7B"), r);
  EXPECT_EQ(hopper.train_peak_allocated_bytes - older.train_peak_allocated_bytes,
            2 * (kCublasWorkspaceHopperBytes - kCublasWorkspaceOlderBytes));
}

// Unpacked data: the reserve is the rising-lengths replay, the fixed-length one the range's low
// end; packed: one figure. expandable_segments lowers the top.
TEST(Estimator, VaryingLengthsWidenTheReservedRange) {
  RunConfig r;
  r.grad_ckpt = GradCkpt::none;
  const auto packed = estimate(shape("Llama-3.1-8B"), r);
  EXPECT_EQ(packed.reserved_low_bytes, packed.reserved_high_bytes);
  EXPECT_EQ(packed.expandable_reserve_bytes, 0u);
  r.packed = false;
  const auto varying = estimate(shape("Llama-3.1-8B"), r);
  EXPECT_EQ(varying.reserved_low_bytes, packed.train_peak_reserved_bytes);
  EXPECT_GT(varying.reserved_high_bytes, varying.reserved_low_bytes);
  EXPECT_EQ(varying.train_peak_reserved_bytes, varying.reserved_high_bytes);
  EXPECT_GT(varying.train_peak_pool_high_bytes, packed.train_peak_pool_high_bytes);
  EXPECT_GT(varying.expandable_reserve_bytes, 0u);
  EXPECT_LT(varying.train_peak_allocated_bytes + varying.expandable_reserve_bytes,
            varying.reserved_high_bytes);
}

TEST(ValidateRun, RejectsZeroAndContradictions) {
  const auto s = shape("Llama-3.1-8B");
  RunConfig r;
  r.batch = 0;
  EXPECT_NE(validate_run(r, s).error().detail.find("--batch"), std::string::npos);
  r = RunConfig{};
  r.seq = 0;
  EXPECT_FALSE(validate_run(r, s));
  r = RunConfig{};
  r.kbit_prep = KbitPrep::on;
  EXPECT_NE(validate_run(r, s).error().detail.find("--kbit-prep"), std::string::npos);
  r = RunConfig{};
  r.lora_targets = LoraTargets::list;
  r.lora_target_names = {"wq"};
  EXPECT_NE(validate_run(r, s).error().detail.find("--lora-targets"), std::string::npos);
  r.lora_target_names = {"q", "v"};
  EXPECT_TRUE(validate_run(r, s));
}

TEST(Verdict, ThresholdsAndFlush) {
  host::PoolView pool;
  pool.free_now_bytes = 50;
  pool.overhead_bytes = 10;
  EXPECT_EQ(verdict_for(101, 100, std::nullopt), Verdict::wont_fit);
  EXPECT_EQ(verdict_for(95, 100, std::nullopt), Verdict::tight);
  EXPECT_EQ(verdict_for(90, 100, std::nullopt), Verdict::fits);
  EXPECT_EQ(verdict_for(41, 100, pool), Verdict::fits_after_flush);
  EXPECT_EQ(verdict_for(40, 100, pool), Verdict::fits);
}

TEST(Advice, LadderOrderSeqThenBatchThenMethodThenNodes) {
  const auto s = shape("Llama-3.1-8B");
  RunConfig r;
  r.seq = 8192;
  r.grad_ckpt = GradCkpt::none;
  const std::uint64_t budget = estimate(s, r).peak_pool_bytes() / 2;
  const auto seq = largest_seq_that_fits(s, r, budget);
  ASSERT_TRUE(seq);
  EXPECT_EQ(seq->run.seq % 128, 0u);
  EXPECT_LE(seq->estimate.peak_pool_bytes(), budget);
  RunConfig longer = seq->run;
  longer.seq += 128;
  EXPECT_GT(estimate(s, longer).peak_pool_bytes(), budget);
  const auto ladder = advise(s, r, budget);
  ASSERT_EQ(ladder.size(), 1u);
  EXPECT_EQ(ladder[0].kind, AdviceKind::shorter_seq);

  RunConfig big;
  big.batch = 8;
  big.seq = 128;
  big.grad_ckpt = GradCkpt::none;
  const std::uint64_t b_budget = estimate(s, RunConfig{big}).peak_pool_bytes() - 1;
  const auto batch = largest_batch_that_fits(s, big, b_budget);
  ASSERT_TRUE(batch);
  EXPECT_EQ(batch->run.batch, 7u);
  EXPECT_EQ(advise(s, big, b_budget)[0].kind, AdviceKind::smaller_batch);
}

TEST(Advice, MethodTiersDownToQloraThenTwoNodes) {
  EXPECT_EQ(method_tier_down(RunConfig{})->method, Method::qlora);
  RunConfig full;
  full.method = Method::full;
  full.precision = Precision::mixed;
  EXPECT_EQ(method_tier_down(full)->method, Method::lora);
  EXPECT_EQ(method_tier_down(full)->precision, Precision::bf16);
  RunConfig q;
  q.method = Method::qlora;
  EXPECT_FALSE(method_tier_down(q));

  const auto s = shape("Llama-3.1-70B");
  full.seq = 128;
  const auto ladder = advise(s, full, 60ull << 30);
  ASSERT_EQ(ladder.size(), 2u);
  EXPECT_EQ(ladder[0].run.method, Method::lora);
  EXPECT_FALSE(ladder[0].fits);
  EXPECT_EQ(ladder[1].run.method, Method::qlora);
  EXPECT_TRUE(ladder[1].fits);
  const auto none = advise(s, full, 1ull << 30);
  EXPECT_EQ(none.back().kind, AdviceKind::more_nodes);
}

TEST(Anchors, EmbeddedFourAndNearest) {
  const auto anchors = embedded_anchors();
  ASSERT_EQ(anchors.size(), 4u);
  const auto e = estimate(shape("Llama-3.1-70B"), anchor_70b_qlora());
  const auto m = nearest_anchor(anchors, 70'553'706'496, anchor_70b_qlora(), e, true);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->anchor.id, "skill-70b-qlora");
  EXPECT_FALSE(m->far);
  RunConfig full;
  full.method = Method::full;
  const auto far = nearest_anchor(anchors, 70'553'706'496, anchor_70b_qlora(),
                                  estimate(shape("Llama-3.1-70B"), full), false);
  EXPECT_TRUE(far->far);
}

// A run planned at another packing is compared with the anchor at the anchor's batch and seq:
// at 2048 tokens the 128k-vocabulary loss alone (12 bytes per logit in its backward) adds 2.2 GiB
// that the 512-token anchor never had.
TEST(Anchors, ComparedAtTheAnchorsBatchAndSeq) {
  const auto anchors = embedded_anchors();
  const auto s = shape("Llama-3.1-70B");
  RunConfig run = anchor_70b_qlora();
  run.seq = 2048;
  const auto e = estimate(s, run);
  std::vector<std::uint64_t> seen;
  const auto m = nearest_anchor(anchors, 70'553'706'496, run, e, true, [&](const RunConfig& at) {
    seen.push_back(at.seq);
    return estimate(s, at);
  });
  ASSERT_TRUE(m);
  ASSERT_EQ(seen, std::vector<std::uint64_t>{512});
  EXPECT_EQ(m->compared_seq, 512u);
  EXPECT_EQ(m->compared_batch, 1u);
  const double like =
      static_cast<double>(estimate(s, anchor_70b_qlora()).train_peak_allocated_bytes) /
      static_cast<double>(40ull << 30);
  EXPECT_DOUBLE_EQ(*m->estimate_ratio, like);
  EXPECT_NEAR(*m->estimate_ratio, 1.0, 0.10);
  EXPECT_GT(*m->run_ratio, *m->estimate_ratio);
  EXPECT_NE(m->message.find("at batch 1 × seq 512"), std::string::npos) << m->message;
  // Planned at the anchor's own configuration: nothing to re-estimate.
  seen.clear();
  const auto same = nearest_anchor(anchors, 70'553'706'496, anchor_70b_qlora(),
                                   estimate(s, anchor_70b_qlora()), true, [&](const RunConfig& at) {
                                     seen.push_back(at.seq);
                                     return estimate(s, at);
                                   });
  EXPECT_TRUE(seen.empty());
  EXPECT_FALSE(same->run_ratio);
}

// The skill's own configuration follows the QLoRA paper's memory figure: paged 32-bit AdamW,
// whose states bitsandbytes allocates with cudaMallocManaged, outside torch's allocated figure.
TEST(Estimator, SeventyBQloraPagedStatesLeaveTheAllocatedPeak) {
  RunConfig r = anchor_70b_qlora();
  const auto plain = estimate(shape("Llama-3.1-70B"), r);
  r.optim = Optim::paged_adamw;
  const auto paged = estimate(shape("Llama-3.1-70B"), r);
  // Every state of >= 1e5 elements is paged: all but the k/v lora_B (16 x 1024) states.
  EXPECT_GT(static_cast<double>(paged.paged_bytes),
            0.9 * static_cast<double>(paged.terms.optimizer));
  EXPECT_LT(paged.paged_bytes, paged.terms.optimizer);
  // At least the paged states leave the allocated peak (bitsandbytes' step has no foreach
  // temporary either, which can lower it further).
  EXPECT_GE(plain.train_peak_allocated_bytes - paged.train_peak_allocated_bytes, paged.paged_bytes);
  EXPECT_NEAR(static_cast<double>(paged.train_peak_allocated_bytes) / kGiB, 40.0, 4.0);
}

TEST(Anchors, UserJsonlRoundTripsAndBadLineIsNamed) {
  Anchor a;
  a.id = "run-1";
  a.model = "Qwen2.5-7B";
  a.params = 7'615'616'512;
  a.method = Method::lora;
  a.peak_pool_bytes = 30ull << 30;
  a.seq = 4096;
  a.batch = 2;
  const std::string text = anchor_to_jsonl(a) + "\n\n" +
                           R"({"model":"Llama-3.1-8B","method":"qlora","peak_pool_bytes":1})";
  const auto parsed = parse_anchors_jsonl(text, "anchors.jsonl");
  ASSERT_TRUE(parsed) << parsed.error().detail;
  ASSERT_EQ(parsed->size(), 2u);
  EXPECT_EQ((*parsed)[0].peak_pool_bytes, 30ull << 30);
  EXPECT_EQ((*parsed)[0].seq, 4096u);
  EXPECT_EQ((*parsed)[1].params, 8'030'261'248u);  // from the catalogue
  const auto bad = parse_anchors_jsonl("{}\n{\"method\":", "f.jsonl");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().detail.find("f.jsonl:1"), std::string::npos);
}

TEST(ResolveModel, ParamsWithoutShapeNamesTheAssumedShape) {
  ModelRef ref;
  ref.params = 70'000'000'000;
  const auto m = resolve_model(ref, HfCacheEnv{});
  ASSERT_TRUE(m);
  EXPECT_EQ(m->shape.params.total, 70'000'000'000u);
  // One note for the fields taken from the nearest shape, one for the block layout assumed.
  ASSERT_EQ(m->notes.size(), 2u);
  EXPECT_NE(m->notes[0].find("block layout assumed from Llama-3.1-70B"), std::string::npos);
  EXPECT_NE(m->notes[1].find("taken from the catalogue shape of Llama-3.1-70B"), std::string::npos);
  ref.name = "Llama-3.1-8B";
  EXPECT_FALSE(resolve_model(ref, HfCacheEnv{}));  // MODEL and --params contradict
  ModelRef unknown;
  unknown.name = "NoSuchModel-9B";
  EXPECT_NE(resolve_model(unknown, HfCacheEnv{}).error().detail.find("unknown model"),
            std::string::npos);
}

}  // namespace
}  // namespace sparkops::plan

namespace sparkops::plan {
namespace {

RunConfig litgpt_qlora() {
  RunConfig r;
  r.method = Method::qlora;
  r.batch = 2;
  r.seq = 512;
  r.grad_ckpt = GradCkpt::none;
  r.lora_rank = 32;
  r.lora_targets = LoraTargets::list;
  r.lora_target_names = {"q_proj", "v_proj"};
  apply_framework(Framework::litgpt, r);
  return r;
}

// bitsandbytes PagedAdamW states live in cudaMallocManaged memory: in the pool, never in
// torch's allocated figure.
TEST(Estimator, PagedOptimizerStatesCountInThePoolNotInAllocated) {
  const auto s = shape("Llama-2-7B");
  const auto e = estimate(s, litgpt_qlora());
  EXPECT_GT(e.paged_bytes, 0u);
  EXPECT_EQ(e.paged_bytes, e.terms.optimizer);  // every r32 A/B matrix has >= 1e5 elements
  EXPECT_EQ(e.train_peak_pool_bytes, e.train_peak_allocated_bytes + e.terms.cuda_context +
                                         e.terms.allocator_reserve + e.paged_bytes +
                                         e.terms.host_process);
}

// reserved is its own figure: allocated plus what the caching allocator's replay reserves above
// what it was asked for; the pool range spans the context's measured range.
TEST(Estimator, ReservedIsAllocatedPlusTheReplayedReserve) {
  const auto e = estimate(shape("Llama-3.1-8B"), RunConfig{});
  EXPECT_EQ(e.train_peak_reserved_bytes, e.train_peak_allocated_bytes + e.terms.allocator_reserve);
  EXPECT_EQ(e.reserved_low_bytes, e.train_peak_reserved_bytes);
  // Segment rounding and cached transients: a few percent of the peak, never nothing.
  EXPECT_GT(e.terms.allocator_reserve, 0u);
  EXPECT_LT(e.terms.allocator_reserve, e.train_peak_allocated_bytes / 2);
  EXPECT_LT(e.train_peak_pool_low_bytes, e.train_peak_pool_bytes);
  EXPECT_GT(e.train_peak_pool_high_bytes, e.train_peak_pool_bytes);
}

// Fabric quantizes every nn.Linear, the lm_head too: the head's bytes go from bf16 to NF4.
TEST(Estimator, QuantizedHeadAndUntiedHeadChangeTheWeights) {
  const auto s = shape("Llama-2-7B");
  RunConfig a = litgpt_qlora();
  RunConfig b = a;
  b.quantize_head = false;
  const double head = static_cast<double>(s.arch.vocab * s.arch.hidden);
  EXPECT_NEAR(static_cast<double>(estimate(s, b).terms.weights - estimate(s, a).terms.weights),
              head * (2.0 - estimator_constants().nf4_bytes_per_param), 2.0);
  // A tied model (Gemma) gets LitGPT's separate lm_head: V·h more bf16 bytes under LoRA.
  const auto g = shape("Gemma-2-2B");
  ASSERT_TRUE(g.arch.tied_embeddings);
  RunConfig lora;
  RunConfig lit = lora;
  lit.separate_head = true;
  EXPECT_EQ(estimate(g, lit).terms.weights - estimate(g, lora).terms.weights,
            g.arch.vocab * g.arch.hidden * 2);
}

// bitsandbytes <= 0.43.1 keeps each 4-bit linear's input in ctx.tensors until the graph is
// dropped; LitGPT's loop holds the previous graph through the next forward, so the peak carries
// a second copy of every layer's kept inputs: at least post-norm + MLP-down inputs per layer.
TEST(Estimator, HeldGraphAddsTheKeptInputsOfEveryLayer) {
  const auto s = shape("Llama-2-7B");
  RunConfig held = litgpt_qlora();
  RunConfig dropped = held;
  dropped.loop_holds_graph = false;
  const double tokens = 2.0 * 512.0;
  const double per_layer = 2.0 * static_cast<double>(s.arch.hidden + s.arch.intermediate);
  const double gap = static_cast<double>(estimate(s, held).train_peak_allocated_bytes) -
                     static_cast<double>(estimate(s, dropped).train_peak_allocated_bytes);
  EXPECT_GE(gap, static_cast<double>(s.arch.layers) * per_layer * tokens);
  // bitsandbytes 0.43.2+ keeps no input: the held graph then adds only its logits.
  held.bnb_saves_input = dropped.bnb_saves_input = false;
  const double logits = 2.0 * static_cast<double>(s.arch.vocab) * tokens;
  EXPECT_LE(static_cast<double>(estimate(s, held).train_peak_allocated_bytes) -
                static_cast<double>(estimate(s, dropped).train_peak_allocated_bytes),
            logits + 1.0);
}

}  // namespace
}  // namespace sparkops::plan

namespace sparkops::plan {
namespace {

TEST(Estimator, NcclBuffersOnlyWithSeveralRanksAndOutsideReserved) {
  const auto s = fixtures::shape("Llama-3.1-8B");
  const Estimate one = estimate(s, fixtures::full_run(1));
  EXPECT_EQ(one.terms.nccl_buffers, 0u);
  EXPECT_EQ(one.train_peak_device_bytes,
            one.train_peak_reserved_bytes + one.terms.cuda_context + one.paged_bytes);
  const Estimate eight = estimate(s, fixtures::full_run(8, ShardMode::fsdp));
  // 32 channels x one ring connection's LL (512 KiB) + LL128 (4,915,200 B) + Simple (4 MiB).
  EXPECT_EQ(eight.terms.nccl_buffers, 32u * (524288u + 4915200u + 4194304u));
  EXPECT_EQ(eight.train_peak_device_bytes, eight.train_peak_reserved_bytes +
                                               eight.terms.cuda_context + eight.terms.nccl_buffers +
                                               eight.paged_bytes);
  // The channel count is the assumption: 2 to 64 channels in the device range.
  const auto& k = estimator_constants();
  EXPECT_EQ(eight.train_peak_device_low_bytes,
            eight.reserved_low_bytes + k.cuda_context_low_bytes + 2u * 9633792u);
  EXPECT_EQ(eight.train_peak_device_high_bytes,
            eight.reserved_high_bytes + k.cuda_context_high_bytes + 64u * 9633792u);
}

TEST(Estimator, LoraMixedUnderFsdpShardsFp32AndGathersBf16) {
  const auto s = fixtures::shape("Llama-3.1-8B");
  RunConfig bf16;
  bf16.gpus = 8;
  bf16.shard = ShardMode::fsdp;
  RunConfig mixed = bf16;
  mixed.precision = Precision::mixed;
  const Estimate b = estimate(s, bf16), m = estimate(s, mixed);
  // The shards double (fp32 as loaded); the gathered root and two layers stay bf16, as do the
  // activations (FSDP MixedPrecision computes in param_dtype).
  const double p = static_cast<double>(s.params.total);
  EXPECT_NEAR(static_cast<double>(m.terms.weights - b.terms.weights), p * 2.0 / 8.0, p * 1e-6);
  EXPECT_EQ(m.terms.activations, b.terms.activations);
  EXPECT_EQ(m.terms.adapter, b.terms.adapter);
  // DeepSpeed's bf16 engine casts the module itself: mixed and bf16 hold the same weights.
  RunConfig z3 = bf16, z3m = mixed;
  z3.shard = z3m.shard = ShardMode::zero3;
  EXPECT_EQ(estimate(s, z3).terms.weights, estimate(s, z3m).terms.weights);
}

TEST(Estimator, LoraMixedOnOneGpuKeepsAutocastCopiesOfFrozenWeights) {
  const auto s = fixtures::shape("Llama-3.1-8B");
  RunConfig bf16;
  bf16.grad_ckpt = GradCkpt::none;
  RunConfig mixed = bf16;
  mixed.precision = Precision::mixed;
  const Estimate b = estimate(s, bf16), m = estimate(s, mixed);
  // Every frozen linear whose input requires grad keeps its bf16 copy (2 B per element): all
  // seven in layers 1-31; in layer 0 all but q/k/v, which read the embedding's norm (no gradient
  // flows there); o_proj reads the adapted attention, the MLP the residual after it.
  const std::uint64_t h = 4096, kv = 1024, i = 14336;
  const std::uint64_t layer = (h * (h + kv + kv + h) + 3 * h * i) * 2;
  const std::uint64_t first = (h * h + 3 * h * i) * 2;
  EXPECT_EQ(m.terms.activations - b.terms.activations, 31 * layer + first);
  // The frozen head's copy, kept for the gradient of its input until the loss backward.
  EXPECT_EQ(m.terms.logits - b.terms.logits, 128256u * h * 2);
  // Checkpointed, the layers keep only their inputs: the copies live in the recomputed layer.
  RunConfig ck = bf16, ckm = mixed;
  ck.grad_ckpt = ckm.grad_ckpt = GradCkpt::full;
  EXPECT_EQ(estimate(s, ckm).terms.activations, estimate(s, ck).terms.activations);
}

TEST(Estimator, NormHeadKeepsANormalizedCopyOfTheHeadWeight) {
  // Baichuan-2's NormHead: F.linear(h, F.normalize(weight)) keeps the normalized bf16 copy of
  // the frozen head (V x h, 2 B) for the gradient of h until the head's backward.
  RunConfig r;
  auto s = shape("Llama-3.1-8B");
  const Estimate llama = estimate(s, r);
  s.arch.family = "baichuan";
  const Estimate baichuan = estimate(s, r);
  EXPECT_EQ(baichuan.terms.logits - llama.terms.logits, 128256u * 4096u * 2u);
  EXPECT_EQ(baichuan.terms.activations, llama.terms.activations);
  EXPECT_GT(baichuan.train_peak_allocated_bytes, llama.train_peak_allocated_bytes);
}

TEST(Estimator, NemoRunsMegatronsLayerForLlamaAndTheHfOneElsewhere) {
  // --framework nemo, full fine-tuning, nothing recomputed: Megatron-Core's TE layer keeps per
  // token and layer (bf16) the LayerNormLinear inputs and ln_outs (4 x 2h), two rsigmas (2 x 4),
  // q and out (2 x 2q), k and v's copy (2 x 2kv), the softmax stats (4 a head), the SwiGLU input
  // (2 x 2i) and output (2i): data/families.json megatron_gpt.
  RunConfig r;
  r.method = Method::full;
  apply_framework(Framework::nemo, r);
  const auto s = shape("Llama-3.1-8B");
  RunConfig hf = r;
  hf.framework = Framework::hf;  // the same run under the HF program
  const double per_layer = 8 * 4096 + 8 + 4 * 4096 + 4 * 1024 + 4 * 32 + 6 * 14336;
  const double T = static_cast<double>(r.batch * r.seq);
  const double a = static_cast<double>(estimate(s, r).terms.activations);
  const double layers = per_layer * T * 32;
  EXPECT_GT(a, layers);
  EXPECT_LT(a - layers, 0.02 * layers);  // the stem, final norm and output: small beside them
  EXPECT_LT(a, static_cast<double>(estimate(s, hf).terms.activations));
  // Qwen3 (q/k norms) has no Megatron program here: the HF one, under either framework.
  auto q3 = s;
  q3.arch.family = "qwen3";
  EXPECT_EQ(estimate(q3, r).terms.activations, estimate(q3, hf).terms.activations);
}

TEST(Estimator, QloraWithAnFp16HeadUnderBf16AutocastKeepsOneHeadCopy) {
  // transformers < 4.37 loads a 4-bit model without torch_dtype in fp16: the unquantized lm_head
  // is fp16, and autocast(bfloat16) casts it per call; the matmul keeps the bf16 copy (V x h,
  // 2 B) for the gradient of h until the head's backward. The 4-bit linears cast nothing.
  const auto s = fixtures::shape("Llama-3.1-8B");
  RunConfig q;
  q.method = Method::qlora;
  RunConfig kept = q;
  kept.qlora_kept_fp16 = true;
  const Estimate a = estimate(s, q), b = estimate(s, kept);
  EXPECT_EQ(b.terms.logits - a.terms.logits, 128256u * 4096u * 2u);
  EXPECT_EQ(b.terms.activations, a.terms.activations);
  EXPECT_EQ(b.terms.weights, a.terms.weights);  // fp16 and bf16 are both 2 B
}

TEST(Estimator, LoraOnTheHeadAddsItsAdapterAndKeepsItsDroppedInput) {
  // LitGPT lora_head: true (lora.py GPT: the lm_head is a LoRALinear with r = lora_r): A is
  // r x h, B is V x r; with dropout the head keeps its dropped bf16 input and the bool mask.
  const auto s = fixtures::shape("Llama-3.1-8B");
  RunConfig r;
  r.grad_ckpt = GradCkpt::none;
  apply_framework(Framework::litgpt, r);
  RunConfig h = r;
  h.lora_head = true;
  const Estimate a = estimate(s, r), b = estimate(s, h);
  EXPECT_EQ(b.trainable_params - a.trainable_params, 16u * (4096u + 128256u));
  const std::uint64_t T = 2048;
  EXPECT_EQ(b.terms.logits - a.terms.logits, T * 4096u * 3u + T * 16u * 2u);
  EXPECT_GT(b.train_peak_allocated_bytes, a.train_peak_allocated_bytes);
}

TEST(Estimator, AccumulatedGradientsLiveThroughForwardAndBackward) {
  // zero_grad runs only after the optimizer step: from the second micro-batch on every .grad
  // exists during the forward and the backward, and AccumulateGrad adds into it in place.
  const auto s = fixtures::shape("TinyLlama-1.1B");
  RunConfig one;
  one.method = Method::full;
  one.grad_ckpt = GradCkpt::none;
  one.batch = 4;
  one.seq = 512;
  RunConfig eight = one;
  eight.grad_accum = 8;
  const Estimate a = estimate(s, one), b = estimate(s, eight);
  EXPECT_EQ(a.terms.gradients, b.terms.gradients);
  EXPECT_GT(b.train_peak_allocated_bytes, a.train_peak_allocated_bytes);
  EXPECT_LE(b.train_peak_allocated_bytes - a.train_peak_allocated_bytes, b.terms.gradients);
}

}  // namespace
}  // namespace sparkops::plan
