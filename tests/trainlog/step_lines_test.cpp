// Loops that print their own step lines, from the lines their code prints (none of them is in the
// corpus; each shape is the f-string or printf of the named file):
// - nanochat scripts/base_train.py print0(f"step {step:05d}/{num_iterations:05d} ({pct_done:.2f}%)
//   | loss: {..:.6f} | lrm: {lrm:.2f} | dt: {dt * 1000:.2f}ms | tok/sec: {tok_per_sec:,} | mfu:
//   {mfu:.2f} | total time: {total_training_time/60:.2f}m"), its evaluation print0(f"Step
//   {step:05d} | Validation bpb: {val_bpb:.4f}");
// - build-nanogpt train_gpt2.py print(f"step {step:5d} | loss: {..:.6f} | lr {lr:.4e} | norm:
//   {norm:.4f} | dt: {dt*1000:.2f}ms | tok/sec: {tokens_per_sec:.2f}");
// - llm.c train_gpt2.cu printf0("step %4d/%d | loss %7.6f (%+.2fz)| norm %6.4f (%+.2fz)| lr %.2e |
//   %.2f ms | %.1f%% bf16 MFU | %.0f tok/s\n") and train_gpt2.c printf("step %d: train loss %f
//   (took %f ms)\n");
// - torchtitan metrics.py logger.info(f"{color.red}step: {step:2}  {color.green}loss:
//   {..:7.4f}  ... {color.magenta}mfu: {mfu:.2f}%{color.reset}") under the formatter
//   "[titan] %(asctime)s - %(name)s - %(levelname)s - %(message)s", every log_freq steps, and the
//   variant with "step_time: {time_end_to_end:7.4f}" (seconds); its validator's "validate step:";
// - MaxText "completed step: {step}, seconds: {..:.3f}, TFLOP/s/device: .., loss: {..:.3f}";
// - verl "step:{step} - key:value - ... - timing_s/step:{..}"; PaddleNLP "global step {}/{},
//   epoch: {}, batch: {}, loss: {:.6f}, lr: {:.10f}, speed: {:.2f} step/s".

#include <gtest/gtest.h>

#include "trainlog/parse_log.hpp"
#include "trainlog/step_line_scan.hpp"

namespace sparkops::trainlog {
namespace {

std::optional<StepLineScan> scan(std::string_view line) {
  std::string scratch;
  return scan_step_line(line, scratch);
}

StepSeries parse(std::string_view text) {
  auto s = parse_log_text(text, ParseOptions{});
  EXPECT_TRUE(s.has_value()) << (s ? "" : s.error().detail);
  return s ? *s : StepSeries{};
}

TEST(StepLineScan, NanochatLineGivesStepTotalLossAndDt) {
  const auto s = scan(
      "step 00123/21400 (0.57%) | loss: 3.214567 | lrm: 1.00 | dt: 1250.50ms | tok/sec: 419,430 "
      "| mfu: 38.12 | total time: 2.56m");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->step, 123);
  EXPECT_EQ(s->total, 21400);
  ASSERT_TRUE(s->seconds);
  EXPECT_DOUBLE_EQ(*s->seconds, 1.2505);  // dt, not the cumulative "total time"
  ASSERT_TRUE(s->loss);
  EXPECT_DOUBLE_EQ(*s->loss, 3.214567);
  EXPECT_FALSE(s->evaluation);
}

TEST(StepLineScan, BuildNanogptAndLlmcLines) {
  auto s = scan(
      "step    5 | loss: 10.934832 | lr 6.0000e-05 | norm: 15.2371 | dt: 1234.56ms | tok/sec: "
      "424678.12");
  ASSERT_TRUE(s && s->seconds);
  EXPECT_EQ(s->step, 5);
  EXPECT_DOUBLE_EQ(*s->seconds, 1.23456);
  s = scan(
      "step   12/74 | loss 4.677099 (+0.00z)| norm 1.2345 (+0.00z)| lr 3.00e-04 | 318.52 ms | "
      "41.2% bf16 MFU | 1607 tok/s");
  ASSERT_TRUE(s && s->seconds);
  EXPECT_EQ(s->step, 12);
  EXPECT_EQ(s->total, 74);
  EXPECT_DOUBLE_EQ(*s->seconds, 0.31852);  // the bare "318.52 ms" field
  ASSERT_TRUE(s->loss);
  EXPECT_DOUBLE_EQ(*s->loss, 4.677099);
  s = scan("step 3: train loss 5.270007 (took 1523.436000 ms)");
  ASSERT_TRUE(s && s->seconds);
  EXPECT_DOUBLE_EQ(*s->seconds, 1.523436);
  ASSERT_TRUE(s->loss);
  EXPECT_DOUBLE_EQ(*s->loss, 5.270007);
}

TEST(StepLineScan, TorchtitanColouredLineIsTimedByItsTimestamp) {
  const auto s = scan(
      "[titan] 2025-03-01 12:00:02,123 - root - INFO - \x1b[31mstep: 10  \x1b[32mloss:  7.1234  "
      "\x1b[38;2;255;165;0mgrad_norm:  1.2000  \x1b[33mmemory: 30.12GiB(38.05%)  \x1b[34mtps: "
      "4,096  \x1b[36mtflops: 123.45  \x1b[35mmfu: 12.34%\x1b[39m");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->step, 10);
  EXPECT_FALSE(s->seconds);  // tokens per second alone do not give seconds per step
  ASSERT_TRUE(s->time);
  ASSERT_TRUE(s->loss);
  EXPECT_DOUBLE_EQ(*s->loss, 7.1234);
  const auto t = scan("step: 20  loss:  6.9  step_time:  1.2345  tps: 4,096  mfu: 12.34%");
  ASSERT_TRUE(t && t->seconds);
  EXPECT_DOUBLE_EQ(*t->seconds, 1.2345);  // step_time is printed in seconds without a unit
}

TEST(StepLineScan, MaxTextVerlPaddleAndHandWrittenLoops) {
  auto s = scan(
      "completed step: 42, seconds: 1.234, TFLOP/s/device: 123.456, Tokens/s/device: 1234.5, "
      "total_weights: 8192, loss: 2.345");
  ASSERT_TRUE(s && s->seconds);
  EXPECT_EQ(s->step, 42);
  EXPECT_DOUBLE_EQ(*s->seconds, 1.234);
  s = scan("step:7 - actor/pg_loss:0.012 - critic/score/mean:0.5 - timing_s/step:12.3 - x:1");
  ASSERT_TRUE(s && s->seconds);
  EXPECT_EQ(s->step, 7);
  EXPECT_DOUBLE_EQ(*s->seconds, 12.3);
  EXPECT_FALSE(s->loss);  // actor/pg_loss is not the training loss
  s = scan(
      "global step 10/1000, epoch: 0, batch: 10, loss: 2.312345, lr: 0.0000100000, speed: 1.25 "
      "step/s");
  ASSERT_TRUE(s && s->seconds);
  EXPECT_EQ(s->step, 10);
  EXPECT_EQ(s->total, 1000);
  EXPECT_DOUBLE_EQ(*s->seconds, 0.8);
  s = scan("Step 10/100, loss=1.25, time=0.5s");
  ASSERT_TRUE(s && s->seconds);
  EXPECT_DOUBLE_EQ(*s->seconds, 0.5);
  EXPECT_DOUBLE_EQ(*s->loss, 1.25);
}

TEST(StepLineScan, NemoTwoProgressLineCountsTheGlobalStep) {
  const auto s = scan(
      "Training epoch 1, iteration 5/99 | lr: 6.897e-06 | global_batch_size: 128 | global_step: "
      "104 | max_memory_reserved: 127785762816 | reduced_train_loss: 11.96 | train_step_timing in "
      "s: 6.08 | TFLOPS_per_GPU: 1.249e+03 | consumed_samples: 5888 | val_loss: 12.1");
  ASSERT_TRUE(s && s->seconds);
  EXPECT_EQ(s->step, 104);  // global_step, not the iteration within epoch 1
  EXPECT_DOUBLE_EQ(*s->seconds, 6.08);
  ASSERT_TRUE(s->loss);
  EXPECT_DOUBLE_EQ(*s->loss, 11.96);  // reduced_train_loss, not the carried val_loss
}

TEST(StepLineScan, TorchtuneDiskLoggerLineHasAStepAndLossOnly) {
  const auto s = scan("Step 12 | loss:1.2345 lr:2e-05 tokens_per_second_per_gpu:1234.5 ");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->step, 12);
  EXPECT_FALSE(s->seconds);  // tokens per second are no time per step
  ASSERT_TRUE(s->loss);
  EXPECT_DOUBLE_EQ(*s->loss, 1.2345);
}

TEST(StepLineScan, NemoAutomodelLineIsTimedByItsLoggingTimestamp) {
  // nemo_automodel recipes: logging.info("step {} | epoch {} | loss {:.4f} | grad_norm {:.4f} | lr
  // {:.2e} | mem {:.2f} GiB | tps {:.2f}({:.2f}/gpu) | num_label_tokens {}") under logging's
  // asctime.
  const auto s = scan(
      "2025-10-17 11:00:02,500 - root - INFO - step 4 | epoch 0 | loss 1.5514 | grad_norm 1.2345 "
      "| lr 1.00e-05 | mem 11.87 GiB | tps 6924.50(865.56/gpu) | num_label_tokens 1234");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->step, 4);
  EXPECT_FALSE(s->seconds);  // neither GiB nor tokens per second are a time
  EXPECT_TRUE(s->time);
  ASSERT_TRUE(s->loss);
  EXPECT_DOUBLE_EQ(*s->loss, 1.5514);
}

TEST(StepLineScan, WhatIsNotAStepLine) {
  const auto cumulative = scan("step 5 | loss: 2.0 | total time: 12.30m");
  ASSERT_TRUE(cumulative);  // a step with its loss, but a cumulative clock is no time per step
  EXPECT_FALSE(cumulative->seconds);
  EXPECT_FALSE(scan("warmup_steps: 100, time: 1s"));  // no step counter
  EXPECT_FALSE(scan("max_steps = 500 dt: 10ms"));
  EXPECT_FALSE(scan("time/step: 1.2s"));                   // "step" inside another name
  EXPECT_FALSE(scan("step 1.5 of the recipe, time: 2s"));  // not an integer
  EXPECT_FALSE(scan("steps 10 | dt: 5ms"));
  const auto negative = scan("step 10 | loss: 2.0 | dt: -5ms");
  ASSERT_TRUE(negative);
  EXPECT_FALSE(negative->seconds);  // no negative durations
  EXPECT_FALSE(scan(""));
  EXPECT_FALSE(scan("\x1b[31m\x1b"));
  // A sentence about a step is no step's report, timestamped or not.
  EXPECT_FALSE(scan("[titan] 2025-03-01 12:00:00,000 - root - INFO - Training starts at step 1"));
  EXPECT_FALSE(scan("2025-03-01 12:00:00 Saving checkpoint at step 500, took 3.2s"));
}

TEST(StepLineScan, EvaluationLinesAreMarked) {
  auto s = scan("Step 00250 | Validation bpb: 0.8123");
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->evaluation);
  EXPECT_EQ(s->step, 250);
  s = scan("[titan] 2025-03-01 12:10:00,000 - root - INFO - validate step: 100  loss:  3.2100");
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->evaluation);
  EXPECT_FALSE(s->loss);  // not a training loss
}

TEST(StepLines, NanochatLogFindsTheSlowdownFromDt) {
  std::string text = "Vocab size: 65,536\nnum_layers: 20\n";
  for (int step = 0; step < 60; ++step) {
    const double dt_ms = step < 40 ? 1250.0 : 2100.0;
    text += "step " + std::string(step < 10 ? "0000" : "000") + std::to_string(step) +
            "/21400 (0.00%) | loss: 3.500000 | lrm: 1.00 | dt: " + std::to_string(dt_ms) +
            "ms | tok/sec: 419,430 | mfu: 38.12 | total time: 1.00m\n";
    if (step == 30) text += "Step 00030 | Validation bpb: 0.9000\n";
  }
  const auto s = parse(text);
  EXPECT_EQ(s.format, LogFormat::step_lines);
  ASSERT_EQ(s.steps.size(), 60u);
  EXPECT_EQ(s.total_steps, 21400);
  EXPECT_EQ(s.steps[0].source, TimeSource::printed);
  EXPECT_DOUBLE_EQ(*s.steps[39].seconds, 1.25);
  EXPECT_DOUBLE_EQ(*s.steps[40].seconds, 2.1);
  ASSERT_EQ(s.markers.size(), 1u);
  EXPECT_EQ(s.markers[0].kind, MarkerKind::eval);
  EXPECT_EQ(s.markers[0].step, 30);
}

TEST(StepLines, TorchtitanLogEveryTenStepsIsTimedByTimestampDifferences) {
  const std::string text =
      "[rank0]:[titan] 2025-03-01 12:00:00,000 - root - INFO - Training starts at step 1\n"
      "[rank0]:[titan] 2025-03-01 12:00:05,000 - root - INFO - step:  1  loss: 12.0000  "
      "memory: 30.12GiB(38.05%)  tps: 1,024  tflops: 12.00  mfu: 1.23%\n"
      "[rank0]:[titan] 2025-03-01 12:00:25,000 - root - INFO - step: 10  loss:  9.0000  "
      "memory: 30.12GiB(38.05%)  tps: 4,096  tflops: 48.00  mfu: 4.92%\n"
      "[rank0]:[titan] 2025-03-01 12:00:45,000 - root - INFO - step: 20  loss:  8.0000  "
      "memory: 30.12GiB(38.05%)  tps: 4,096  tflops: 48.00  mfu: 4.92%\n"
      "[rank1]:[titan] 2025-03-01 12:00:45,100 - root - INFO - step: 20  loss:  8.0000  "
      "memory: 30.12GiB(38.05%)  tps: 4,096  tflops: 48.00  mfu: 4.92%\n";
  const auto s = parse(text);
  EXPECT_EQ(s.format, LogFormat::step_lines);
  ASSERT_EQ(s.steps.size(), 3u);  // rank 1's copy is not a step of its own
  EXPECT_EQ(s.time_basis, TimeBasis::log_timestamps);
  EXPECT_FALSE(s.steps[0].seconds);
  ASSERT_TRUE(s.steps[1].seconds);
  EXPECT_DOUBLE_EQ(*s.steps[1].seconds, 20.0 / 9.0);
  EXPECT_EQ(s.steps[1].source, TimeSource::wall_delta);
  EXPECT_DOUBLE_EQ(*s.steps[2].seconds, 2.0);
  EXPECT_DOUBLE_EQ(*s.steps[2].loss, 8.0);
}

TEST(StepLines, AKnownFormatKeepsItsLines) {
  // nanoGPT's "iter N: loss .., time ..ms" would read as a generic step line too; it stays nanogpt.
  const auto s = parse(
      "iter 0: loss 4.2, time 1200.00ms, mfu -100.00%\n"
      "iter 10: loss 3.2, time 1389.25ms, mfu 10.73%\n"
      "iter 20: loss 3.0, time 1390.00ms, mfu 10.73%\n");
  EXPECT_EQ(s.format, LogFormat::nanogpt);
}

}  // namespace
}  // namespace sparkops::trainlog
