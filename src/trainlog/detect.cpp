#include "trainlog/detect.hpp"

#include <algorithm>
#include <utility>

#include "base/text.hpp"

namespace sparkops::trainlog {

namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// "1|45|Loss: 1.84" (torchtune's bar description).
bool has_torchtune_desc(std::string_view line) {
  const auto at = line.find("|Loss: ");
  if (at == std::string_view::npos || at == 0 || !is_digit(line[at - 1])) return false;
  std::size_t p = at;
  while (p > 0 && is_digit(line[p - 1])) --p;
  return p > 1 && line[p - 1] == '|' && is_digit(line[p - 2]);
}

}  // namespace

void FormatDetector::feed(std::string_view line) {
  scan_tqdm(line, scratch_);
  for (const auto& u : scratch_) {
    if (u.n > 0) ++tqdm_;
  }
  if (!scratch_.empty()) {
    if (has_torchtune_desc(line)) ++torchtune_;
    if (line.find("train_step_timing in s=") != std::string_view::npos) ++lightning_;
  }
  // "Transformers version: 4.57.6", ".../site-packages/transformers/training_args.py"
  if (line.find("transformers") != std::string_view::npos ||
      line.find("Transformers") != std::string_view::npos) {
    ++hf_hint_;
  }
  if (line.find("[PID:") != std::string_view::npos ||
      line.find("] [axolotl.") != std::string_view::npos) {
    ++axolotl_;
  }
  if (line.find("{'loss'") != std::string_view::npos ||
      line.find("{'eval_") != std::string_view::npos ||
      line.find("{'train_runtime'") != std::string_view::npos) {
    ++hf_dict_;
  }
  if (line.find("elapsed time per iteration (ms):") != std::string_view::npos &&
      line.find("iteration ") != std::string_view::npos) {
    ++megatron_;
  }
  if (line.find("SamplesPerSec=") != std::string_view::npos &&
      line.find("global_step=") != std::string_view::npos) {
    ++deepspeed_;
  }
  const std::string_view t = trim(line);
  if (starts_with(t, "Iter ") && (t.find("It/sec") != std::string_view::npos ||
                                  t.find("Val loss") != std::string_view::npos)) {
    ++mlx_;
  }
  if (line.find("train_opt_callback:") != std::string_view::npos) ++llama_cpp_;
  if (starts_with(t, "{\"") && t.find("\"current_steps\"") != std::string_view::npos)
    ++llamafactory_;
}

Detection FormatDetector::result() const {
  LogFormat family = LogFormat::tqdm;
  if (torchtune_) {
    family = LogFormat::torchtune;
  } else if (lightning_) {
    family = LogFormat::lightning;
  } else if (axolotl_) {
    family = LogFormat::axolotl;
  } else if (hf_dict_ || hf_hint_) {
    family = LogFormat::hf_trainer;
  }
  std::vector<std::pair<LogFormat, std::uint64_t>> votes = {
      {family, std::max(tqdm_, hf_dict_)}, {LogFormat::megatron, megatron_},
      {LogFormat::deepspeed, deepspeed_},  {LogFormat::mlx_lm, mlx_},
      {LogFormat::llama_cpp, llama_cpp_},  {LogFormat::llamafactory, llamafactory_},
  };
  std::stable_sort(votes.begin(), votes.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  Detection d;
  if (votes[0].second == 0) return d;
  d.format = votes[0].first;
  d.evidence = votes[0].second;
  if (votes[1].second > 0) {
    d.other = votes[1].first;
    d.other_evidence = votes[1].second;
  }
  return d;
}

bool FormatDetector::confident() const {
  const auto r = result();
  return r.evidence >= 200;
}

bool looks_like_trainer_state(std::string_view head) {
  const std::string_view t = trim(head);
  return !t.empty() && t.front() == '{' && t.find("\"log_history\"") != std::string_view::npos;
}

}  // namespace sparkops::trainlog
