#pragma once
// StepSeries: what every training-log parser produces. One record per optimizer step the log shows
// (in the order the log shows them; step numbers may repeat after a restart), plus markers for the
// things that pause training (evaluation, checkpoint saves, restarts, unexplained gaps).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
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
  keras,          // Keras/TF progbar "300/300 [=====] - 850s 3s/step - loss: ..." after "Epoch 1/5"
  litgpt,         // LitGPT "iter 31 step 1: loss 1.92, iter time: 196.06ms (optimizer.step)"
  nanogpt,        // nanoGPT "iter 10: loss 3.22, time 1389.25ms, mfu 10.73%" (and modded-nanogpt)
  fairseq,        // fairseq "| epoch 001:    100 / 1000 loss=8.2, ..., wps=1234, ups=1.2, ..."
  composer,       // MosaicML Composer "[batch=10/100]:" blocks with "Time/batch" and wall clock
  step_lines,     // a loop's own "step N ... dt: 1250ms" lines (nanochat, llm.c, torchtitan, ...)
  notebook,  // HF Trainer in a notebook, copied: "[60/60 05:12, Epoch 0/1]" + "Step\tTraining Loss"
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

// Where a record's seconds come from, so output can say how far to trust them.
enum class TimeSource : std::uint8_t {
  none,
  printed,  // the framework's own per-step time (Megatron ms, train_step_timing, Keras, nanoGPT)
  ema,      // a smoothed rate: tqdm's displayed s/it or it/s (EMA, smoothing 0.3), llama.cpp dt
  running_mean,   // a cumulative average since the start (ms-swift train_speed, Keras epoch mean)
  elapsed_delta,  // difference of the log's elapsed clock between two updates over the steps
                  // between
  wall_delta,     // difference of the log's wall timestamps over the steps between
  samples_rate,   // batch size over a samples/s figure (DeepSpeed CurrSamplesPerSec)
};
std::string_view time_source_name(TimeSource s);

struct StepRecord {
  std::int64_t step = 0;
  // The optimizer step the log printed alongside a micro-step record (LitGPT); nullopt elsewhere.
  std::optional<std::int64_t> optimizer_step;
  TimeSource source = TimeSource::none;
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
  std::uint64_t steps_before = 0;  // step records added before this marker (set by SeriesBuilder)
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
  bool inferred_steps = false;          // the log prints no step numbers: records are numbered
  bool truncated_document = false;      // a JSON document cut off mid-write: its whole entries read
  std::uint64_t other_rank_lines = 0;   // lines of other ranks ("[rank1]:"), left out
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
  // Records are micro-batches (LitGPT "iter"): this many make one optimizer step. Step times in the
  // headline are multiplied by it.
  std::int64_t micro_steps_per_step = 1;
  std::string
      unit;  // the step-time unit as the log prints it ("s/it", "it/s", "ms/step", "HH:MM:SS")
  // Indices into `steps` where a fresh run starts (the counter went back to the first step, not a
  // resume). Always holds 0 when `steps` is not empty; resumes stay inside their run.
  std::vector<std::size_t> run_starts;
  ParseNotes notes;
};

// The records of one run: [begin, end) into StepSeries::steps.
struct RunRange {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::size_t index = 0;  // which run (0-based) of run_count
  std::size_t run_count = 0;
};
// The run the headline describes: the one with the most records (the first on ties).
RunRange primary_run(const StepSeries& s);

// Headline figures of the primary run, in optimizer steps: the first and last step (for micro-step
// series, the optimizer step the log printed, 0 excluded) and the median seconds per optimizer
// step.
struct Headline {
  std::optional<std::int64_t> first_step;
  std::optional<std::int64_t> last_step;
  std::optional<double> median_seconds;
  std::size_t records = 0;
  RunRange run;
};
Headline headline(const StepSeries& s);

// Median of the primary run's seconds per optimizer step (nullopt when none has one).
std::optional<double> median_seconds(const StepSeries& s);

// How many records of the primary run take their seconds from each source (for output).
std::vector<std::pair<TimeSource, std::size_t>> time_sources(const StepSeries& s);

}  // namespace sparkops::trainlog
