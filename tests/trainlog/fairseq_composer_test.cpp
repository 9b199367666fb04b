// fairseq and Composer, from the lines their logging code prints (no real log of either is in the
// corpus). Shapes:
// - fairseq at commit 0400ebb5: fairseq/logging/progress_bar.py SimpleProgressBar.log
//   ("{prefix}:  {i+1:5d} / {size:d} {k=v, ...}", prefix "epoch {:03d}"), .print ("{prefix} |
//   {k v | ...}"), JsonProgressBar (json.dumps of the stats, Numbers formatted "{:g}" as strings,
//   "epoch" and "update" first); fairseq_cli/train.py's logging format
//   "%(asctime)s | %(levelname)s | %(name)s | %(message)s" (name train_inner / valid / train) and
//   get_training_stats (wall rounded to whole seconds); checkpoint_utils "Saved checkpoint {}
//   (epoch
//   {} @ {} updates, score {}) (writing took {} seconds)".
// - Composer at commit 02c872e: composer/loggers/console_logger.py log_to_console
//   ("{progress}:" then "\n\t {prefix}{name}: {value}"), _get_progress_string
//   ("[epoch=E][batch=B/N]" when max_duration is in epochs, batch counted within the epoch;
//   "[batch=B/N]" when in batches), _get_eval_progress_string ("[Eval batch=B/N] Eval on {label}
//   data"); floats as "{:.4f}".

#include <gtest/gtest.h>

#include "trainlog/parse_log.hpp"

namespace sparkops::trainlog {
namespace {

StepSeries parse(std::string_view text) {
  auto s = parse_log_text(text, ParseOptions{});
  EXPECT_TRUE(s.has_value()) << (s ? "" : s.error().detail);
  return s ? *s : StepSeries{};
}

constexpr std::string_view kFairseqSimple =
    "2021-03-01 12:00:00 | INFO | fairseq_cli.train | start training epoch 1\n"
    "2021-03-01 12:00:40 | INFO | train_inner | epoch 001:    100 / 1000 loss=8.21, nll_loss=7.64, "
    "ppl=199.45, wps=12345.6, ups=2.71, wpb=4550.3, bsz=128, num_updates=100, lr=1e-05, "
    "gnorm=1.9, train_wall=36, gb_free=10.2, wall=40\n"
    "2021-03-01 12:01:17 | INFO | train_inner | epoch 001:    200 / 1000 loss=7.9, nll_loss=7.31, "
    "ppl=158.7, wps=12400.1, ups=2.73, wpb=4550.3, bsz=128, num_updates=200, lr=2e-05, "
    "gnorm=1.7, train_wall=36, gb_free=10.2, wall=77\n"
    "2021-03-01 12:01:20 | INFO | valid | epoch 001 | valid on 'valid' subset | loss 7.6 | "
    "nll_loss 7.02 | ppl 129.8 | wps 30000 | wpb 4000 | bsz 100 | num_updates 200\n"
    "2021-03-01 12:01:23 | INFO | fairseq.checkpoint_utils | Saved checkpoint "
    "checkpoints/checkpoint1.pt (epoch 1 @ 200 updates, score 7.6) (writing took 2.5 seconds)\n"
    "2021-03-01 12:01:23 | INFO | train | epoch 001 | loss 8.05 | nll_loss 7.47 | ppl 177.3 | "
    "wps 12300 | ups 2.7 | wpb 4550.3 | bsz 128 | num_updates 200 | lr 2e-05 | gnorm 1.8 | "
    "train_wall 72 | gb_free 10.2 | wall 83\n"
    "2021-03-01 12:02:00 | INFO | train_inner | epoch 002:    100 / 1000 loss=7.5, nll_loss=6.9, "
    "ppl=119.4, wps=12350.2, ups=2.72, wpb=4550.3, bsz=128, num_updates=300, lr=3e-05, "
    "gnorm=1.6, train_wall=36, gb_free=10.2, wall=120\n";

TEST(Fairseq, SimpleFormatStepsAreUpdatesTimedByWall) {
  const auto s = parse(kFairseqSimple);
  EXPECT_EQ(s.format, LogFormat::fairseq);
  ASSERT_EQ(s.steps.size(), 3u);  // the end-of-epoch "train" summary is not a step
  EXPECT_EQ(s.steps[0].step, 100);
  EXPECT_EQ(s.steps[2].step, 300);  // num_updates, not the per-epoch position
  ASSERT_TRUE(s.steps[0].seconds);
  EXPECT_NEAR(*s.steps[0].seconds, 1.0 / 2.71, 1e-9);  // no earlier wall: the interval's rate
  EXPECT_EQ(s.steps[0].source, TimeSource::running_mean);
  ASSERT_TRUE(s.steps[1].seconds);
  EXPECT_NEAR(*s.steps[1].seconds, (77.0 - 40.0) / 100.0, 1e-9);
  EXPECT_EQ(s.steps[1].source, TimeSource::elapsed_delta);
  EXPECT_NEAR(*s.steps[2].seconds, (120.0 - 77.0) / 100.0, 1e-9);
  EXPECT_DOUBLE_EQ(*s.steps[1].loss, 7.9);
  std::size_t evals = 0;
  std::size_t checkpoints = 0;
  for (const auto& m : s.markers) {
    evals += m.kind == MarkerKind::eval;
    checkpoints += m.kind == MarkerKind::checkpoint;
  }
  EXPECT_EQ(evals, 1u);
  EXPECT_EQ(checkpoints, 1u);
}

TEST(Fairseq, JsonFormatBehindTheLoggingPrefix) {
  const auto s = parse(
      "2021-03-01 12:00:40 | INFO | train_inner | {\"epoch\": 1, \"update\": 0.1, \"loss\": "
      "\"8.21\", \"ppl\": \"296.1\", \"wps\": \"12345.6\", \"ups\": \"2.71\", \"wpb\": \"4550.3\", "
      "\"bsz\": \"128\", \"num_updates\": \"100\", \"lr\": \"1e-05\", \"gnorm\": \"1.9\", "
      "\"train_wall\": \"36\", \"gb_free\": \"10.2\", \"wall\": \"40\"}\n"
      "2021-03-01 12:01:17 | INFO | train_inner | {\"epoch\": 1, \"update\": 0.2, \"loss\": "
      "\"7.9\", \"ppl\": \"238.8\", \"wps\": \"12400.1\", \"ups\": \"2.73\", \"wpb\": \"4550.3\", "
      "\"bsz\": \"128\", \"num_updates\": \"200\", \"lr\": \"2e-05\", \"gnorm\": \"1.7\", "
      "\"train_wall\": \"36\", \"gb_free\": \"10.2\", \"wall\": \"77\"}\n");
  EXPECT_EQ(s.format, LogFormat::fairseq);
  ASSERT_EQ(s.steps.size(), 2u);
  EXPECT_EQ(s.steps[1].step, 200);
  EXPECT_NEAR(*s.steps[1].seconds, 0.37, 1e-9);
  EXPECT_DOUBLE_EQ(*s.steps[0].loss, 8.21);
}

constexpr std::string_view kComposerEpochs =
    "******************************\n"
    "Config:\n"
    "enabled_algorithms/GradientClipping: true\n"
    "******************************\n"
    "[epoch=1][batch=50/100]:\n"
    "\t Train time/epoch: 0\n"
    "\t Train time/batch: 49\n"
    "\t Train trainer/device_train_microbatch_size: 8\n"
    "\t Train loss/train/total: 2.3021\n"
    "\t Train wall_clock/train: 25.0000\n"
    "[epoch=1][batch=100/100]:\n"
    "\t Train time/batch: 99\n"
    "\t Train loss/train/total: 2.1000\n"
    "\t Train wall_clock/train: 50.0000\n"
    "[Eval batch=1/10] Eval on eval data\n"
    "[Eval batch=10/10] Eval on eval data:\n"
    "\t Eval metrics/eval/LanguageCrossEntropy: 2.0500\n"
    "[epoch=2][batch=50/100]:\n"
    "\t Train time/batch: 149\n"
    "\t Train loss/train/total: 1.9000\n"
    "\t Train wall_clock/train: 75.5000\n";

TEST(Composer, EpochHeadersCountBatchesWithinTheEpoch) {
  const auto s = parse(kComposerEpochs);
  EXPECT_EQ(s.format, LogFormat::composer);
  ASSERT_EQ(s.steps.size(), 3u);
  EXPECT_EQ(s.steps[0].step, 50);
  EXPECT_EQ(s.steps[1].step, 100);
  EXPECT_EQ(s.steps[2].step, 150);  // (2 - 1) x 100 + 50: one run, not a restart
  EXPECT_FALSE(s.steps[0].seconds);
  EXPECT_NEAR(*s.steps[1].seconds, 0.5, 1e-9);
  EXPECT_NEAR(*s.steps[2].seconds, 0.51, 1e-9);
  EXPECT_DOUBLE_EQ(*s.steps[2].loss, 1.9);
  ASSERT_EQ(s.markers.size(), 1u);
  EXPECT_EQ(s.markers[0].kind, MarkerKind::eval);
}

TEST(Composer, BatchDurationHeadersGiveTheTotal) {
  const auto s = parse(
      "[batch=10/1000]:\n"
      "\t Train loss/train/total: 7.1234\n"
      "\t Train time/train: 0.0010\n"
      "[batch=20/1000]:\n"
      "\t Train loss/train/total: 6.9000\n"
      "\t Train time/train: 0.0020\n");
  EXPECT_EQ(s.format, LogFormat::composer);
  ASSERT_EQ(s.steps.size(), 2u);
  EXPECT_EQ(s.total_steps, 1000);
  EXPECT_NEAR(*s.steps[1].seconds, 0.001 * 3600.0 / 10.0, 1e-9);  // time/train is in hours
}

// Metaflow (metaflow/runtime.py Task.log: "[run/step/task (pid N)] " after the CLI logger's
// "YYYY-MM-DD hh:mm:ss.mmm " stamp) and `argo logs` ("<pod>: <line>", pod names ending in Argo's
// 10-digit node id or 5-character suffix) wrap every line; the training lines inside must parse.
TEST(Prefixes, MetaflowTaskPrefixIsStripped) {
  const auto s = parse(
      "2024-03-01 12:00:00.123 [1709300000123456/train/2 (pid 4242)] Iter 10: Train loss 4.391, "
      "Learning Rate 2.000e-05, It/sec 1.609, Tokens/sec 1234.5, Trained Tokens 5000, Peak mem "
      "9.1 GB\n"
      "2024-03-01 12:00:06.321 [1709300000123456/train/2 (pid 4242)] Iter 20: Train loss 2.647, "
      "Learning Rate 2.000e-05, It/sec 1.600, Tokens/sec 1230.1, Trained Tokens 10000, Peak mem "
      "9.1 GB\n");
  EXPECT_EQ(s.format, LogFormat::mlx_lm);
  ASSERT_EQ(s.steps.size(), 2u);
  EXPECT_EQ(s.steps[1].step, 20);
  EXPECT_NEAR(*s.steps[1].seconds, 1.0 / 1.6, 1e-9);
}

TEST(Prefixes, ArgoPodPrefixIsStripped) {
  const auto s = parse(
      "train-llm-x7k2p-train-1234567890:  iteration        1/    5000 | consumed samples: 8 | "
      "elapsed time per iteration (ms): 1200.5 | lm loss: 1.050000E+01 |\n"
      "train-llm-x7k2p-train-1234567890:  iteration        2/    5000 | consumed samples: 16 | "
      "elapsed time per iteration (ms): 1100.5 | lm loss: 1.020000E+01 |\n");
  EXPECT_EQ(s.format, LogFormat::megatron);
  ASSERT_EQ(s.steps.size(), 2u);
  EXPECT_NEAR(*s.steps[1].seconds, 1.1005, 1e-9);
  EXPECT_DOUBLE_EQ(*s.steps[1].loss, 10.2);
  // "name: " whose last segment is no Argo id is not a pod prefix: the line stays as it is, and
  // MLX-LM lines must start with "Iter " (the line is read as a generic step line instead).
  const auto kept =
      parse_log_text("data-loader: Iter 10: Train loss 4.391, It/sec 1.609\n", ParseOptions{});
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept->format, LogFormat::step_lines);
}

}  // namespace
}  // namespace sparkops::trainlog
