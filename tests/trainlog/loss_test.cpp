// The training loss each format prints lands in StepRecord::loss (the HTML report draws it). Rows
// are real logs of tests/fixtures/logs; each expected value was read off the file's first record
// with a loss (the line is quoted in the comment).

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "support/test_support.hpp"
#include "trainlog/parse_log.hpp"

namespace sparkops::trainlog {
namespace {

struct LossRow {
  const char* file;
  std::int64_t first_step;  // the first record with a loss
  double first_loss;
  std::size_t with_loss;  // records that carry one
  std::size_t records;
};

void PrintTo(const LossRow& r, std::ostream* os) {
  *os << r.file;
}

class LossColumn : public ::testing::TestWithParam<LossRow> {};

TEST_P(LossColumn, FirstLossAndCoverage) {
  const auto& row = GetParam();
  auto s = parse_log_file(test::fixture(std::string("logs/") + row.file), ParseOptions{});
  ASSERT_TRUE(s.has_value()) << s.error().detail;
  ASSERT_EQ(s->steps.size(), row.records);
  const StepRecord* first = nullptr;
  std::size_t with = 0;
  for (const auto& r : s->steps) {
    if (!r.loss) continue;
    ++with;
    if (!first) first = &r;
  }
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->step, row.first_step);
  EXPECT_NEAR(*first->loss, row.first_loss, 1e-9);
  EXPECT_EQ(with, row.with_loss);
}

INSTANTIATE_TEST_SUITE_P(
    RealLogs, LossColumn,
    ::testing::Values(
        // Megatron training_log: "| lm loss: 3.010825E+00 |"
        LossRow{"megatron-lm_gpt2-345m_8gpu_iterations.log", 1, 3.010825, 40, 40},
        // NeMo bar postfix: "reduced_train_loss=0.0252"
        LossRow{"nemo1_megatron_peft_early_stop_4ranks_literal_caret_M.log", 6024, 0.0252, 1, 1},
        // LLaMA-Factory trainer_log.jsonl: "\"loss\": 0.8548"
        LossRow{"llamafactory_trainer_log_sft.jsonl", 10, 0.8548, 20, 20},
        // torchtune "1|1|Loss: 1.849762201309204" names its step; the render of 3/1367 still
        // shows step 2's description, so step 3 has no loss of its own.
        LossRow{"torchtune_multinode_slurm_tqdm_epoch_step_loss.log", 1, 1.849762201309204, 2, 3},
        // llama.cpp train_opt_callback "loss=15.399460"
        LossRow{"llamacpp_finetune_lora_llama3_8b_ckpt_every10_ctrl_c.log", 1, 15.39946, 50, 50},
        // MLX-LM "Iter 10: Train loss 4.391, ..."
        LossRow{"mlx_lm_lora_ministral3b_macbook_500iters.log", 10, 4.391, 50, 50},
        // LitGPT "iter 30 step 0: loss 1.9667, iter time: ..."
        LossRow{"litgpt_lora_openllama7b_microbatch_iters_vs_optimizer_steps.log", 30, 1.9667, 18,
                18},
        // ms-swift string dict "'loss': '0.3713'"
        LossRow{"ms_swift_qwen2vl_lora_colab_string_dicts_val_at_step50.log", 1, 0.3713, 11, 11},
        // nanoGPT "iter 0: loss 4.2586, time ..."
        LossRow{"nanogpt_blog_failed_restarts_eval_ckpt_at250_truncated.log", 0, 4.2586, 45, 45},
        // HF Trainer dict after the bar update of its step: "10/50 [...]{'loss': 0.6957, ..."
        LossRow{"hf_trainer_tqdm_s_per_it_with_nested_eval_bars_each_epoch.log", 10, 0.6957, 5, 5},
        // HF dict printed before the final render (tqdm.write redraws the bar after it)
        LossRow{"hf_trainer_ezpz_aurora_xpu_fsdp_clipped_max_epochs_sentinel.log", 100, 2.6031, 1,
                1},
        // Keras progbar "300/300 [====] - ... - loss: 0.1248"
        LossRow{"keras_tf2_fit_epoch_lines_s_vs_ms_per_step_units.log", 300, 0.1248, 5, 5}));

}  // namespace
}  // namespace sparkops::trainlog
