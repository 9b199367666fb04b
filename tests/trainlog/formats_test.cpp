// Formats the corpus has no file for, the tqdm scanner and the .times sidecar, on real-shaped
// lines.

#include <gtest/gtest.h>

#include <algorithm>

#include "base/time_format.hpp"
#include "support/test_support.hpp"
#include "trainlog/parse_log.hpp"
#include "trainlog/py_dict.hpp"
#include "trainlog/sidecar.hpp"
#include "trainlog/tqdm_scan.hpp"

namespace sparkops::trainlog {
namespace {

StepSeries parse(std::string_view text, ParseOptions po = {}) {
  auto s = parse_log_text(text, po);
  EXPECT_TRUE(s.has_value()) << (s ? "" : s.error().detail);
  return s ? *s : StepSeries{};
}

TEST(TqdmScan, ReadsRateInBothUnitsAndUnknownTotal) {
  std::vector<TqdmUpdate> u;
  scan_tqdm(" 45%|####5     | 45/100 [01:23<01:40,  1.83s/it]", u);
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].n, 45);
  EXPECT_EQ(u[0].total, 100);
  EXPECT_EQ(u[0].elapsed_seconds, 83);
  EXPECT_NEAR(*u[0].seconds_per_it, 1.83, 1e-12);
  scan_tqdm("Epoch 1: 12it [00:03,  4.00it/s, loss=2.1]", u);
  ASSERT_EQ(u.size(), 1u);
  EXPECT_FALSE(u[0].total);
  EXPECT_NEAR(*u[0].seconds_per_it, 0.25, 1e-12);
  EXPECT_EQ(u[0].desc, "Epoch 1");
  EXPECT_EQ(u[0].postfix, "loss=2.1");
}

TEST(TqdmScan, SkipsByteBarsAndUnknownRate) {
  std::vector<TqdmUpdate> u;
  scan_tqdm("model.safetensors: 40%|####   | 2.00G/5.00G [00:10<00:15, 200MB/s]", u);
  EXPECT_TRUE(u.empty());
  scan_tqdm("  0%|          | 0/1755 [00:00<?, ?it/s]", u);
  ASSERT_EQ(u.size(), 1u);
  EXPECT_FALSE(u[0].seconds_per_it);
}

TEST(PyDict, ReadsNumericAndStringValues) {
  PyDictEntries e;
  ASSERT_TRUE(parse_py_dict("{'loss': '1.2345', 'grad_norm': 0.52, 'epoch': 0.1}", e));
  EXPECT_EQ(*dict_value(e, "loss"), 1.2345);
  EXPECT_EQ(*dict_value(e, "grad_norm"), 0.52);
  EXPECT_FALSE(parse_py_dict("{'loss': 1.2", e));
}

TEST(Formats, HfTrainerCarriageReturnsEvalAndRuntime) {
  const std::string log =
      "  0%|          | 0/50 [00:00<?, ?it/s]\r  2%|2         | 1/50 [00:02<01:38,  2.00s/it]"
      "\r  4%|4         | 2/50 [00:04<01:36,  2.00s/it]\n{'loss': 1.5, 'grad_norm': 0.4, 'epoch': "
      "0.04}\n"
      "{'eval_loss': 1.4, 'eval_runtime': 12.5, 'epoch': 0.04}\n"
      "  6%|6         | 3/50 [00:19<05:00,  6.00s/it]\n"
      "{'train_runtime': 120.0, 'train_steps_per_second': 0.4, 'epoch': 1.0}\n";
  const auto s = parse(log);
  EXPECT_EQ(s.format, LogFormat::hf_trainer);
  ASSERT_EQ(s.steps.size(), 3u);
  EXPECT_EQ(*s.train_runtime_seconds, 120.0);
  ASSERT_EQ(s.markers.size(), 1u);
  EXPECT_EQ(s.markers[0].kind, MarkerKind::eval);
  EXPECT_EQ(s.markers[0].step, 2);
  EXPECT_EQ(*s.markers[0].duration_seconds, 12.5);
}

TEST(Formats, LightningTrainStepTiming) {
  const std::string log =
      "Epoch 0:  10%|#         | 10/100 [00:10<01:30, 1.00it/s, v_num=0, reduced_train_loss=2.31, "
      "global_step=9.0, train_step_timing in s=0.98]\r"
      "Epoch 0:  20%|##        | 20/100 [00:20<01:20, 1.00it/s, v_num=0, train_step_timing in "
      "s=0.97]\n"
      "Validation DataLoader 0:  50%|#####     | 5/10 [00:01<00:01, 5.00it/s]\n"
      "Epoch 1:  10%|#         | 10/100 [00:10<01:30, 1.00it/s, train_step_timing in s=1.02]\n";
  const auto s = parse(log);
  EXPECT_EQ(s.format, LogFormat::lightning);
  ASSERT_EQ(s.steps.size(), 3u);
  EXPECT_EQ(s.steps[2].step, 110);  // epoch 1, 10 of 100
  EXPECT_EQ(*s.steps[0].seconds, 0.98);
  ASSERT_EQ(s.markers.size(), 1u);
  EXPECT_EQ(s.markers[0].kind, MarkerKind::eval);
}

TEST(Formats, LlamaCppTrainOptCallback) {
  const std::string log =
      "train_opt_callback: iter=     0 sample=1/27520 sched=0.000000 loss=0.000000 |->\n"
      "train_opt_callback: iter=     1 sample=9/27520 sched=0.010000 loss=3.175470 dt=00:00:34 "
      "eta=03:47:12 |->\n"
      "train_opt_callback: iter=     2 sample=17/27520 sched=0.020000 loss=2.9 dt=00:00:33 "
      "eta=03:46:10 |->\n"
      "save_checkpoint_lora_file: saving to checkpoint-2.gguf\n";
  const auto s = parse(log);
  EXPECT_EQ(s.format, LogFormat::llama_cpp);
  ASSERT_EQ(s.steps.size(), 2u);
  EXPECT_EQ(*s.steps[0].seconds, 34.0);
  ASSERT_EQ(s.markers.size(), 1u);
  EXPECT_EQ(s.markers[0].kind, MarkerKind::checkpoint);
}

TEST(Formats, TrainerStateLogHistory) {
  const std::string json = R"({"global_step": 20, "max_steps": 100, "log_history": [
    {"epoch": 0.1, "loss": 1.5, "step": 10}, {"epoch": 0.2, "loss": 1.4, "step": 20},
    {"eval_loss": 1.3, "eval_runtime": 30.5, "step": 20}, {"train_runtime": 400.0, "step": 20}]})";
  const auto s = parse(json);
  EXPECT_EQ(s.format, LogFormat::trainer_state);
  ASSERT_EQ(s.steps.size(), 2u);
  EXPECT_FALSE(s.steps[0].seconds);
  EXPECT_EQ(*s.train_runtime_seconds, 400.0);
  EXPECT_EQ(s.total_steps, 100);
  ASSERT_EQ(s.markers.size(), 1u);
  EXPECT_EQ(*s.markers[0].duration_seconds, 30.5);
}

// A real trainer_state.json (TRL SFT of TinyLlama, transformers' sort_keys/indent=2 layout; see
// tests/fixtures/trainlog/README.md) cut in the middle of its 15th log_history entry, as a copy
// taken while the Trainer rewrites the file at a save would be.
TEST(Formats, TrainerStateCutOffMidEntryKeepsItsCompleteEntries) {
  auto s = parse_log_file(test::fixture("trainlog/trainer_state_tinyllama_sft_cut_mid_entry.json"),
                          ParseOptions{});
  ASSERT_TRUE(s.has_value()) << s.error().detail;
  EXPECT_EQ(s->format, LogFormat::trainer_state);
  ASSERT_EQ(s->steps.size(), 13u);  // steps 15..195 every 15; the cut entry (step 210) is left out
  EXPECT_EQ(s->steps.front().step, 15);
  EXPECT_EQ(s->steps.back().step, 195);
  ASSERT_TRUE(s->steps.front().loss);
  EXPECT_DOUBLE_EQ(*s->steps.front().loss, 2.0762);
  ASSERT_EQ(s->markers.size(), 1u);  // the eval entry at step 200
  EXPECT_DOUBLE_EQ(*s->markers[0].duration_seconds, 311.107);
  EXPECT_FALSE(s->total_steps);  // max_steps sorts after log_history: it was never written
  const auto notes = describe_notes(s->notes);
  EXPECT_TRUE(std::any_of(notes.begin(), notes.end(), [](const std::string& n) {
    return n.rfind("document is cut off", 0) == 0;
  }));
}

TEST(Formats, TrainerStateBrokenInTheMiddleIsStillRejected) {
  // Not a cut-off: the error is before the end of the text, so nothing is salvaged.
  const std::string json = R"({"log_history": [{"loss": 1.5, "step": 10}, {"loss": 1.4, "step": x}],
    "max_steps": 100})";
  const auto s = parse_log_text(json, ParseOptions{});
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.error().detail.find("not valid JSON"), std::string::npos);
}

TEST(Formats, TrainerStateWithAnOverflowingNumberIsRejectedNotThrown) {
  // nlohmann throws out_of_range (not parse_error) for "5.087e19298245615": found by fuzzing.
  const auto s = parse_log_text(
      R"({"log_history": [{"loss": 2.0, "learning_rate": 5.087e19298245615}]})", ParseOptions{});
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.error().detail.find("not valid JSON"), std::string::npos);
}

TEST(Formats, TrainerStateCutAfterLogHistoryKeepsMaxSteps) {
  const std::string json = R"({"global_step": 20, "log_history": [
    {"loss": 1.5, "step": 10}, {"loss": 1.4, "step": 20}], "logging_steps": 10, "max_steps": 100,
    "num_input_tok)";
  const auto s = parse(json);
  ASSERT_EQ(s.steps.size(), 2u);
  EXPECT_EQ(s.total_steps, 100);
  EXPECT_DOUBLE_EQ(*s.steps[1].loss, 1.4);
}

TEST(Formats, RestartWhenTheStepCounterGoesBack) {
  const std::string log =
      " iteration        1/  100 | elapsed time per iteration (ms): 1000.0 |\n"
      " iteration        2/  100 | elapsed time per iteration (ms): 1000.0 |\n"
      " iteration        1/  100 | elapsed time per iteration (ms): 1100.0 |\n";
  const auto s = parse(log);
  ASSERT_EQ(s.steps.size(), 3u);
  ASSERT_EQ(s.markers.size(), 1u);
  EXPECT_EQ(s.markers[0].kind, MarkerKind::restart);
}

TEST(Sidecar, StampsEveryRecordIncludingCarriageReturnRedraws) {
  const std::string log =
      "  1%|1         | 1/100 [00:02<03:18,  2.00s/it]\r  2%|2         | 2/100 [00:04<03:16,  "
      "2.00s/it]\n";
  const std::string times = "2025-11-09T09:26:12.000Z\t0\n2025-11-09T09:26:14.500Z\t47\n";
  ParseOptions po;
  const auto s = parse_log_text(log, po, times);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->time_basis, TimeBasis::sidecar);
  ASSERT_EQ(s->steps.size(), 2u);
  EXPECT_EQ(format_iso8601_utc_ms(*s->steps[0].time), "2025-11-09T09:26:12.000Z");
  EXPECT_EQ(format_iso8601_utc_ms(*s->steps[1].time), "2025-11-09T09:26:14.500Z");
}

TEST(Sidecar, ParsesOnlyTimestampTabOffset) {
  EXPECT_TRUE(parse_sidecar_line("2025-11-09T09:26:12.345Z\t10482"));
  EXPECT_FALSE(parse_sidecar_line("2025-11-09T09:26:12.345Z 10482"));
  EXPECT_FALSE(parse_sidecar_line("yesterday\t5"));
}

TEST(Formats, StartFlagAnchorsTqdmElapsed) {
  ParseOptions po;
  po.start = parse_timestamp("2025-11-09T09:00:00Z");
  const auto s = parse("  1%|1         | 1/100 [01:00<99:00, 60.00s/it]\n", po);
  ASSERT_EQ(s.steps.size(), 1u);
  EXPECT_EQ(s.time_basis, TimeBasis::start_flag);
  EXPECT_EQ(format_iso8601_utc_ms(*s.steps[0].time), "2025-11-09T09:01:00.000Z");
}

}  // namespace
}  // namespace sparkops::trainlog
