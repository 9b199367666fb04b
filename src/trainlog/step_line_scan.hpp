#pragma once
// One line of a training loop that prints its own step lines, "step N ... <time per step> ...",
// read by the fields the line names rather than by one program's exact layout. The loops this
// reads (each line shape quoted from the code that prints it):
//   step 00123/21400 (0.57%) | loss: 3.2 | lrm: 1.00 | dt: 1250.00ms | tok/sec: 419,430 | ...
//                                                      (nanochat scripts/base_train.py, print0)
//   step    5 | loss: 10.93 | lr 6.0000e-05 | norm: 15.2 | dt: 1234.56ms | tok/sec: 12345.67
//                                                      (build-nanogpt train_gpt2.py)
//   step    1/74 | loss 4.677099 (+0.00z)| norm 1.2 (+0.00z)| lr 3.00e-04 | 318.52 ms | ...
//                                                      (llm.c train_gpt2.cu, printf0)
//   [titan] 2025-03-01 12:00:02,123 - root - INFO - step: 10  loss:  7.1234  memory: ...
//                                                      (torchtitan metrics.py, logger.info; the
//                                                       colour codes it prints are skipped)
//   step: 10  loss:  7.1234  step_time:  1.2345  tps: 4,096  ...   (torchtitan, step_time in s)
//   completed step: 10, seconds: 1.234, TFLOP/s/device: 123.4, loss: 2.345  (MaxText)
//   step:10 - actor/pg_loss:0.01 - timing_s/step:12.3 - ...          (verl)
//   global step 10/1000, epoch: 0, batch: 10, loss: 2.3, speed: 1.23 step/s  (PaddleNLP)
//   Training epoch 0, iteration 45/99 | lr: 6.9e-06 | global_batch_size: 128 | global_step: 45 |
//     reduced_train_loss: 11.96 | train_step_timing in s: 6.08 | ...  (NeMo 2 / Megatron-Bridge)
//   2025-10-17 11:00:02,500 - root - INFO - step 4 | epoch 0 | loss 1.5514 | ... | mem 11.87 GiB |
//     tps 6924.50(865.56/gpu) | num_label_tokens 1234          (NeMo AutoModel, logging's asctime)
//   Step 12 | loss:1.2345 lr:2e-05 tokens_per_second_per_gpu:1234.5 ...  (torchtune DiskLogger:
//                                                       steps and loss, no time)
// A line is a step line when it names a step (`step`, `iter`, `iteration`, `global step`,
// `global_step`, any case, as a word followed by `:`, `=`, `#` or spaces and an integer, `/total`
// optional; the global counter wins over a per-epoch one; not after "at", "from", ...: "Saving
// checkpoint at step 500" is a sentence) and a time per step, a wall-clock timestamp near its
// start or a training loss. The time per step, in the order tried: a per-step duration key with
// its unit (`dt`, `time`, `step_time`, `step time`, `iter time`, `iter_time`, `time/step`,
// `time_per_step`, `batch_time`, `step_duration`: a unit is required, except for `step_time`,
// which torchtitan prints in seconds; `train_step_timing in s`, `seconds`, `sec/step`, `s/step`,
// `timing_s/step`: seconds; `ms/step`: milliseconds); a bare `<number> ms` field between
// separators (llm.c); a rate (`<number> step/s`, `steps/s`, `it/s`, or `s/it`, `s/step`).
// Cumulative clocks (`total time`, `train_time`, `elapsed`) are not per-step times and are never
// read as one.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/clock.hpp"

namespace sparkops::trainlog {

struct StepLineScan {
  std::int64_t step = 0;
  std::optional<std::int64_t> total;  // "step 10/1000"
  std::optional<double> seconds;      // the time per step the line prints
  std::optional<SystemTime> time;     // the timestamp near the line's start (read as UTC)
  std::optional<double> loss;         // the training loss ("loss", "train loss"), not val/eval
  bool evaluation = false;            // the line reports a validation/evaluation result
};

// nullopt when the line names no step, or names one with no time per step, timestamp, training
// loss or evaluation. `scratch` holds the line without its terminal colour codes (reused across
// calls).
std::optional<StepLineScan> scan_step_line(std::string_view line, std::string& scratch);

}  // namespace sparkops::trainlog
