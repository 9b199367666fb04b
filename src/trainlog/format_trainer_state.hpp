#pragma once
// trainer_state.json, written by Hugging Face Trainer at every checkpoint:
//   {"global_step": 500, "max_steps": 1755, "log_history": [
//     {"epoch": 0.01, "grad_norm": 0.41, "learning_rate": 0.0002, "loss": 1.52, "step": 10}, ...
//     {"eval_loss": 1.31, "eval_runtime": 61.2, "step": 500, ...}, {"train_runtime": 3600.5, ...}]}
// log_history holds no per-step time: steps come without seconds, evaluation entries become markers
// with their eval_runtime, and train_runtime (when the run finished) gives the mean step time.

#include <string_view>

#include "base/result.hpp"
#include "trainlog/step_series.hpp"

namespace sparkops::trainlog {

Result<StepSeries> parse_trainer_state(std::string_view json_text, std::string_view name);

}  // namespace sparkops::trainlog
