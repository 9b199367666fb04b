#pragma once
// Format detection: votes over the first records of a log. Each format is recognised by the line
// its trainer prints for a step; tqdm-based formats are told apart by what accompanies the bar
// (HF metric dicts, axolotl's "[PID:n] [RANK:0]", torchtune's "1|45|Loss:", Lightning's
// "train_step_timing in s=").

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trainlog/notebook_text.hpp"
#include "trainlog/step_series.hpp"
#include "trainlog/tqdm_scan.hpp"

namespace sparkops::trainlog {

struct Detection {
  std::optional<LogFormat> format;  // nullopt: nothing recognised
  std::uint64_t evidence = 0;       // step lines (or bar updates) seen for it
  std::optional<LogFormat> other;   // the runner-up, when another format also had step lines
  std::uint64_t other_evidence = 0;
};

class FormatDetector {
 public:
  void feed(std::string_view line);
  Detection result() const;
  // True once enough step lines were seen to stop looking.
  bool confident() const;

 private:
  std::uint64_t tqdm_ = 0, hf_dict_ = 0, hf_hint_ = 0, axolotl_ = 0, torchtune_ = 0, lightning_ = 0;
  std::uint64_t megatron_ = 0, deepspeed_ = 0, mlx_ = 0, llama_cpp_ = 0, llamafactory_ = 0;
  std::uint64_t keras_ = 0, litgpt_ = 0, nanogpt_ = 0, fairseq_ = 0, composer_ = 0;
  std::uint64_t step_lines_ = 0, notebook_ = 0;
  std::optional<NotebookColumns> notebook_columns_;
  std::vector<TqdmUpdate> scratch_;
  std::string line_scratch_;
};

// True when the text (a file's beginning) is a trainer_state.json document.
bool looks_like_trainer_state(std::string_view head);

}  // namespace sparkops::trainlog
