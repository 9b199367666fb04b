// A Hugging Face Trainer run in a notebook (Unsloth's and TRL's Colab notebooks), copied from the
// rendered output: transformers utils/notebook.py NotebookProgressBar.update_bar's label
// ("[{value}/{total} {elapsed} < {remaining}, {1/avg:.2f} it/s, {comment}]", value padded to the
// total's width; the last update without the remaining time and rate) and the metrics table of
// NotebookTrainingTracker (text_to_html_table: floats "{:.6f}", "No log" where a value is missing),
// whose cells a copy separates with tabs.

#include <gtest/gtest.h>

#include "trainlog/notebook_text.hpp"
#include "trainlog/parse_log.hpp"

namespace sparkops::trainlog {
namespace {

TEST(NotebookLabel, RunningAndFinishedLabels) {
  auto l = parse_notebook_label("[ 25/60 02:10 < 03:02, 0.19 it/s, Epoch 0.40/1]");
  ASSERT_TRUE(l);
  EXPECT_EQ(l->value, 25);
  EXPECT_EQ(l->total, 60);
  EXPECT_DOUBLE_EQ(*l->elapsed_seconds, 130.0);
  EXPECT_DOUBLE_EQ(*l->rate_per_second, 0.19);
  l = parse_notebook_label("[60/60 1:05:12, Epoch 1/1]");
  ASSERT_TRUE(l);
  EXPECT_DOUBLE_EQ(*l->elapsed_seconds, 3912.0);
  EXPECT_FALSE(l->rate_per_second);
  l = parse_notebook_label("[ 0/60 : < :, Epoch 0/1]");
  ASSERT_TRUE(l);
  EXPECT_FALSE(l->elapsed_seconds);
  EXPECT_FALSE(parse_notebook_label("[61/60 05:12]"));  // past the total
  EXPECT_FALSE(parse_notebook_label("[INFO] 10/20 done"));
  EXPECT_FALSE(parse_notebook_label("[60/60 soon]"));
}

TEST(NotebookTable, HeaderAndRowsWithTabsOrSpaces) {
  const auto tabs = parse_notebook_header("Step\tTraining Loss\tValidation Loss\tRewards / chosen");
  ASSERT_TRUE(tabs);
  EXPECT_EQ(tabs->count, 4u);
  EXPECT_EQ(tabs->validation_loss, 2u);
  auto row = parse_notebook_row("20\tNo log\t1.345600\t-0.5", *tabs);
  ASSERT_TRUE(row);
  EXPECT_EQ(row->step, 20);
  EXPECT_FALSE(row->training_loss);
  EXPECT_DOUBLE_EQ(*row->validation_loss, 1.3456);
  const auto spaces = parse_notebook_header("Step Training Loss");
  ASSERT_TRUE(spaces);
  row = parse_notebook_row("1 1.815900", *spaces);
  ASSERT_TRUE(row);
  EXPECT_DOUBLE_EQ(*row->training_loss, 1.8159);
  EXPECT_FALSE(parse_notebook_row("1 1.815900 2.0", *spaces));  // not the header's cells
  EXPECT_FALSE(parse_notebook_row("x 1.8", *spaces));
  EXPECT_FALSE(parse_notebook_header("Step Training Loss Rewards / chosen"));  // ambiguous
  EXPECT_FALSE(parse_notebook_header("Loss\tStep"));
}

TEST(Notebook, CopiedOutputGivesStepsLossesAndTheLabelsMean) {
  auto s = parse_log_text(
      "==((====))==  Unsloth 2025.3: Fast Llama patching.\n"
      " [60/60 05:12, Epoch 0/1]\n"
      "Step\tTraining Loss\n"
      "1\t1.815900\n"
      "2\t2.283100\n"
      "3\t1.724700\n",
      ParseOptions{});
  ASSERT_TRUE(s) << s.error().detail;
  EXPECT_EQ(s->format, LogFormat::notebook);
  ASSERT_EQ(s->steps.size(), 3u);
  EXPECT_EQ(s->total_steps, 60);
  EXPECT_DOUBLE_EQ(*s->steps[1].loss, 2.2831);
  EXPECT_FALSE(s->steps[0].seconds);  // the table has no time per step
  ASSERT_TRUE(s->train_runtime_seconds);
  EXPECT_DOUBLE_EQ(*s->train_runtime_seconds / 3.0, 312.0 / 60.0);  // the label's mean
}

TEST(Notebook, ValidationRowIsAnEvaluationAtItsStep) {
  auto s = parse_log_text(
      " [ 25/60 02:10 < 03:02, 0.19 it/s, Epoch 0.40/1]\n"
      "Step\tTraining Loss\tValidation Loss\n"
      "10\t2.100000\tNo log\n"
      "20\t1.900000\t1.950000\n",
      ParseOptions{});
  ASSERT_TRUE(s) << s.error().detail;
  EXPECT_EQ(s->format, LogFormat::notebook);
  ASSERT_EQ(s->steps.size(), 2u);
  ASSERT_EQ(s->markers.size(), 1u);
  EXPECT_EQ(s->markers[0].kind, MarkerKind::eval);
  EXPECT_EQ(s->markers[0].step, 20);
}

}  // namespace
}  // namespace sparkops::trainlog
