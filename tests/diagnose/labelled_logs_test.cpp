// Every labelled real log (tests/fixtures/logs/LABELS.csv, copied from the shared corpus with its
// files) yields its label: the format family, the first and last optimizer step, the median seconds
// per step (within 1.5 %, the labels being rounded to three or four figures), the number of pauses
// in the middle of the run, and no slowdown where the label says none.

#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "diagnose/diagnosis.hpp"
#include "support/test_support.hpp"
#include "trainlog/parse_log.hpp"

namespace sparkops::diagnose {
namespace {

TEST(LabelledLogs, EveryLabelHolds) {
  const auto labels = test::read_csv(test::fixture("logs/LABELS.csv"));
  ASSERT_GE(labels.size(), 13u);
  for (const auto& label : labels) {
    const std::string& file = label.at("file");
    SCOPED_TRACE(file);
    trainlog::ParseOptions po;
    po.use_mtime = false;
    const auto s = trainlog::parse_log_file(test::fixture("logs/" + file), po);
    ASSERT_TRUE(s.has_value()) << s.error().detail;
    const auto h = trainlog::headline(*s);
    ASSERT_TRUE(h.first_step && h.last_step);
    EXPECT_EQ(std::to_string(*h.first_step), label.at("first_step"));
    EXPECT_EQ(std::to_string(*h.last_step), label.at("last_step"));
    const std::string& med = label.at("median_step_seconds");
    if (med == "none" || med.empty()) {
      EXPECT_FALSE(h.median_seconds);
    } else {
      ASSERT_TRUE(h.median_seconds);
      const double want = std::stod(med);
      EXPECT_NEAR(*h.median_seconds, want, 0.015 * want);
    }
    const Diagnosis d = diagnose(*s, nullptr, DiagnoseOptions{});
    EXPECT_EQ(std::to_string(d.mid_run_pauses), label.at("pauses"));
    if (label.at("slowdown") == "no") {
      EXPECT_TRUE(d.slowdowns.empty());
    }
  }
}

// The format each labelled log is, by the framework that printed it.
TEST(LabelledLogs, FormatsAreTheFrameworksOwn) {
  const std::pair<const char*, trainlog::LogFormat> cases[] = {
      {"deepspeed_zero2_hf_trainer_fate_llm_wrapped_memallocated.log",
       trainlog::LogFormat::deepspeed},
      {"keras_tf2_fit_epoch_lines_s_vs_ms_per_step_units.log", trainlog::LogFormat::keras},
      {"litgpt_lora_openllama7b_microbatch_iters_vs_optimizer_steps.log",
       trainlog::LogFormat::litgpt},
      {"nanogpt_blog_failed_restarts_eval_ckpt_at250_truncated.log", trainlog::LogFormat::nanogpt},
      {"nemo1_megatron_peft_early_stop_4ranks_literal_caret_M.log", trainlog::LogFormat::lightning},
      {"megatron_lm_rtx4090_timestamped_iters_two_runs_1node_2node.log",
       trainlog::LogFormat::megatron},
      {"ms_swift_qwen2vl_lora_colab_string_dicts_val_at_step50.log",
       trainlog::LogFormat::hf_trainer},
  };
  for (const auto& [file, format] : cases) {
    trainlog::ParseOptions po;
    po.use_mtime = false;
    const auto s = trainlog::parse_log_file(test::fixture(std::string("logs/") + file), po);
    ASSERT_TRUE(s.has_value()) << file;
    EXPECT_EQ(s->format, format) << file;
  }
}

}  // namespace
}  // namespace sparkops::diagnose
