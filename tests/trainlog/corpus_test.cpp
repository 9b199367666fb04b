// Every log of the shared corpus (copied into tests/fixtures/logs) yields the step series its text
// shows: the step counts and median step times below were read off the files by hand.

#include <gtest/gtest.h>

#include "base/time_format.hpp"
#include "support/test_support.hpp"
#include "trainlog/parse_log.hpp"

namespace sparkops::trainlog {
namespace {

StepSeries parse_fixture(std::string_view name) {
  ParseOptions options;
  options.use_mtime = false;
  auto s = parse_log_file(test::fixture(std::string("logs/") + std::string(name)), options);
  EXPECT_TRUE(s.has_value()) << (s ? "" : s.error().detail);
  return s ? *s : StepSeries{};
}

std::size_t count_markers(const StepSeries& s, MarkerKind kind) {
  std::size_t n = 0;
  for (const auto& m : s.markers) n += m.kind == kind;
  return n;
}

TEST(CorpusLogs, AxolotlFinalBarAnchoredByItsTimestamp) {
  const auto s = parse_fixture("axolotl_2025_pid_rank_log_end_of_training_16s_per_it.log");
  EXPECT_EQ(s.format, LogFormat::axolotl);
  ASSERT_EQ(s.steps.size(), 1u);
  EXPECT_EQ(s.steps[0].step, 1124);
  EXPECT_NEAR(*median_seconds(s), 16.34, 1e-9);
  EXPECT_EQ(s.time_basis, TimeBasis::log_timestamps);
  ASSERT_TRUE(s.steps[0].time);
  // "[2:48:45<00:00, 16.34s/it][2025-11-06 11:25:06,763]": the bar ended at that timestamp.
  EXPECT_EQ(format_iso8601_utc_ms(*s.steps[0].time), "2025-11-06T11:25:06.763Z");
  EXPECT_EQ(count_markers(s, MarkerKind::checkpoint), 1u);
}

TEST(CorpusLogs, DeepSpeedTimerLinesEveryTenSteps) {
  const auto s = parse_fixture("deepspeed_zero1_hellodeepspeed_bert_timer_lines.log");
  EXPECT_EQ(s.format, LogFormat::deepspeed);
  ASSERT_EQ(s.steps.size(), 4u);
  EXPECT_EQ(s.steps.front().step, 10);
  EXPECT_EQ(s.steps.back().step, 40);
  EXPECT_FALSE(s.steps[0].seconds);  // no batch size in the excerpt, no earlier timer line
  // 00:41:17,936 -> 00:41:18,677 over 10 steps
  EXPECT_NEAR(*s.steps[1].seconds, 0.0741, 1e-9);
  EXPECT_NEAR(*median_seconds(s), 0.0923, 1e-9);
  EXPECT_EQ(s.time_basis, TimeBasis::log_timestamps);
  EXPECT_EQ(count_markers(s, MarkerKind::checkpoint), 3u);  // global_step10/20/30 saves
}

TEST(CorpusLogs, HfTrainerBarWithoutCarriageReturns) {
  const auto s = parse_fixture("hf_trainer_qlora_qwen3-8b_rtx5000ada_nohup.log");
  EXPECT_EQ(s.format, LogFormat::hf_trainer);
  ASSERT_EQ(s.steps.size(), 30u);  // the "Loading checkpoint shards" bar is not the training bar
  EXPECT_EQ(s.steps.front().step, 1);
  EXPECT_EQ(s.steps.back().step, 30);
  EXPECT_EQ(s.total_steps, 1755);
  EXPECT_NEAR(*s.steps[0].seconds, 21.99, 1e-9);
  EXPECT_NEAR(*median_seconds(s), 21.52, 1e-9);
  EXPECT_EQ(*s.steps.back().elapsed_seconds, 646.0);  // 10:46
  EXPECT_EQ(s.time_basis, TimeBasis::none);
}

TEST(CorpusLogs, LlamaFactoryJsonlDeduplicatesRepeatedSteps) {
  const auto s = parse_fixture("llamafactory_trainer_log_sft.jsonl");
  EXPECT_EQ(s.format, LogFormat::llamafactory);
  ASSERT_EQ(s.steps.size(), 20u);
  EXPECT_EQ(s.steps.back().step, 200);
  EXPECT_NEAR(*s.steps[0].seconds, 13.2, 1e-9);  // "0:02:12" at step 10
  EXPECT_NEAR(*median_seconds(s), 15.0, 1e-9);
  EXPECT_EQ(s.total_steps, 6566);
}

TEST(CorpusLogs, MegatronIterationsAnchoredByTrainingStartDatetime) {
  const auto s = parse_fixture("megatron-lm_gpt2-345m_8gpu_iterations.log");
  EXPECT_EQ(s.format, LogFormat::megatron);
  ASSERT_EQ(s.steps.size(), 40u);
  EXPECT_NEAR(*s.steps[0].seconds, 6.7792, 1e-9);
  EXPECT_NEAR(*median_seconds(s), 1.29965, 1e-9);
  EXPECT_EQ(s.time_basis, TimeBasis::log_timestamps);
  // 2023-08-16 11:59:58 + 6779.2 ms
  EXPECT_EQ(format_iso8601_utc_ms(*s.steps[0].time), "2023-08-16T12:00:04.779Z");
}

TEST(CorpusLogs, MlxLmItersWithValidationAndAdapterSaves) {
  const auto s = parse_fixture("mlx_lm_lora_ministral3b_macbook_500iters.log");
  EXPECT_EQ(s.format, LogFormat::mlx_lm);
  ASSERT_EQ(s.steps.size(), 50u);
  EXPECT_EQ(s.steps.front().step, 10);
  EXPECT_EQ(s.steps.back().step, 500);
  EXPECT_NEAR(*median_seconds(s), 0.6807355094626406, 1e-9);
  EXPECT_EQ(count_markers(s, MarkerKind::eval), 4u);  // Iter 1, 200, 400, 500 "Val loss"
  EXPECT_EQ(count_markers(s, MarkerKind::checkpoint), 5u);
  bool found = false;
  for (const auto& m : s.markers) {
    if (m.kind == MarkerKind::eval && m.step == 200) {
      found = true;
      EXPECT_NEAR(*m.duration_seconds, 8.267, 1e-9);
    }
  }
  EXPECT_TRUE(found);
}

TEST(CorpusLogs, TorchtuneBarWithEpochStepLossDescription) {
  const auto s = parse_fixture("torchtune_multinode_slurm_tqdm_epoch_step_loss.log");
  EXPECT_EQ(s.format, LogFormat::torchtune);
  ASSERT_EQ(s.steps.size(), 3u);
  EXPECT_NEAR(*s.steps[0].seconds, 264.86, 1e-9);
  EXPECT_NEAR(*median_seconds(s), 131.58, 1e-9);
  EXPECT_EQ(s.total_steps, 1367);
}

}  // namespace
}  // namespace sparkops::trainlog
