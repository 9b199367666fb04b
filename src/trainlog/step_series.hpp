#pragma once
// StepSeries: what every training-log parser produces. One record per optimizer step the log shows
// (in the order the log shows them; step numbers may repeat after a restart), plus markers for the
// things that pause training (evaluation, checkpoint saves, restarts, unexplained gaps).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.hpp"

namespace sparkops::trainlog {

enum class LogFormat {
  tqdm,           // bare tqdm bars: "45/1000 [01:23<29:10,  1.83s/it]"
  hf_trainer,     // Hugging Face Trainer / TRL: tqdm bar plus "{'loss': ...}" dict lines
  trainer_state,  // trainer_state.json (log_history)
  llamafactory,   // LLaMA-Factory trainer_log.jsonl
  axolotl,        // axolotl: "[2025-11-06 11:25:06,763] [INFO] [...] [PID:n] [RANK:0]" + tqdm
  megatron,       // Megatron-LM "iteration N/ M | ... elapsed time per iteration (ms): X |"
  deepspeed,      // DeepSpeed "[timer.py] epoch=0/micro_step=N/global_step=N, ...SamplesPerSec=..."
  lightning,      // NeMo / PyTorch Lightning bar with "train_step_timing in s=X"
  torchtune,      // torchtune bar with "E|S|Loss: x" description
  mlx_lm,         // MLX-LM "Iter N: Train loss X, ..., It/sec Z, ..."
  llama_cpp,      // llama.cpp finetune "train_opt_callback: iter= N ... dt=HH:MM:SS"
};

std::string_view format_name(LogFormat f);
std::optional<LogFormat> format_from_name(std::string_view name);
const std::vector<LogFormat>& all_formats();
// "tqdm, hf_trainer, ..." for messages.
std::string known_formats_list();

// How the absolute times of the records were obtained.
enum class TimeBasis {
  none,            // the log has no wall time and nothing anchored it
  log_timestamps,  // timestamps printed in the log itself
  sidecar,         // the `<log>.times` sidecar written by `sparkops watch`
  start_flag,      // elapsed-since-start anchored by --start
  file_mtime,      // elapsed anchored by the file's modification time (approximate)
};
std::string_view time_basis_name(TimeBasis b);

struct StepRecord {
  std::int64_t step = 0;
  std::optional<double> seconds;   // seconds per step at this point, as the log states or derived
  std::optional<SystemTime> time;  // wall time (UTC) the step was reported
  std::optional<double>
      elapsed_seconds;         // seconds since the run (or bar) started, when the log says
  std::optional<double> loss;  // the training loss the log printed with this step, if any
};

enum class MarkerKind {
  eval,        // an evaluation / validation pass
  checkpoint,  // a checkpoint or adapter save
  restart,     // the step counter went back or the run resumed
  stall,  // the log's own clock jumped far more than its step rate explains, with no reason given
};
std::string_view marker_kind_name(MarkerKind k);

struct Marker {
  MarkerKind kind = MarkerKind::eval;
  std::optional<std::int64_t> step;  // the last step reported before the marker
  std::optional<SystemTime> time;
  std::optional<double> duration_seconds;  // when the log states it (eval_runtime, "Val took 7.2s")
  std::string detail;                      // short excerpt of the line (at most 120 bytes)
};

// What was skipped or doubtful while parsing; rendered by describe_notes().
struct ParseNotes {
  std::uint64_t bytes = 0;
  std::uint64_t lines = 0;
  std::uint64_t binary_lines = 0;        // records holding NUL bytes: skipped
  std::uint64_t overlong_lines = 0;      // records over the line cap: parsed in pieces
  std::uint64_t backwards_times = 0;     // timestamps earlier than the previous one: time dropped
  std::uint64_t malformed_records = 0;   // lines that looked like the format but did not parse
  std::uint64_t other_format_lines = 0;  // lines of a different format seen during detection
  std::optional<LogFormat> other_format;
  std::uint64_t downsample_stride = 1;  // >1 when the series was longer than the cap
  std::uint64_t dropped_markers = 0;    // markers beyond the cap
  bool sidecar_mismatch = false;        // the sidecar ended before the log or pointed past it
};

std::vector<std::string> describe_notes(const ParseNotes& notes);

struct StepSeries {
  LogFormat format = LogFormat::tqdm;
  std::vector<StepRecord> steps;
  std::vector<Marker> markers;
  TimeBasis time_basis = TimeBasis::none;
  bool times_approximate = false;
  std::optional<double> train_runtime_seconds;  // the run's own summary (HF train_runtime)
  std::optional<std::int64_t> total_steps;      // the planned total when the log states it
  ParseNotes notes;
};

// Median of the records' seconds (nullopt when none has one).
std::optional<double> median_seconds(const StepSeries& s);

}  // namespace sparkops::trainlog
