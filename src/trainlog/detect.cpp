#include "trainlog/detect.hpp"

#include <algorithm>
#include <utility>

#include "base/text.hpp"
#include "trainlog/step_line_scan.hpp"

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

// "300/300 [=====...] - 251s 837ms/step" or the Keras 3 bar "300/300 ━━━━ 251s 837ms/step".
bool is_keras_bar(std::string_view t) {
  std::size_t p = 0;
  while (p < t.size() && is_digit(t[p])) ++p;
  if (p == 0 || p >= t.size() || t[p] != '/') return false;
  ++p;
  const std::size_t d = p;
  while (p < t.size() && is_digit(t[p])) ++p;
  if (p == d || p + 1 >= t.size() || t[p] != ' ') return false;
  const std::string_view rest = t.substr(p + 1);
  if (!starts_with(rest, "[") && !starts_with(rest, "\xe2\x94\x81")) return false;
  return rest.find("/step") != std::string_view::npos ||
         rest.find("ETA: ") != std::string_view::npos;
}

}  // namespace

void FormatDetector::feed(std::string_view line) {
  scan_tqdm(line, scratch_);
  for (const auto& u : scratch_) {
    if (u.n > 0 && classify_bar(u.desc) == BarRole::candidate) ++tqdm_;
  }
  // torchtune's description also stands alone when the bar was lost ("1|5|Loss: 1.23").
  if (has_torchtune_desc(line)) ++torchtune_;
  if (!scratch_.empty() && line.find("train_step_timing in s=") != std::string_view::npos)
    ++lightning_;
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
  if (is_keras_bar(t)) ++keras_;
  if (t.find("iter time:") != std::string_view::npos &&
      t.find(" step ") != std::string_view::npos && t.find("iter ") != std::string_view::npos)
    ++litgpt_;
  if ((starts_with(t, "iter ") && t.find(": loss ") != std::string_view::npos &&
       t.find(", time ") != std::string_view::npos) ||
      (starts_with(t, "step:") && t.find(" train_time:") != std::string_view::npos))
    ++nanogpt_;
  if ((line.find("num_updates=") != std::string_view::npos &&
       (line.find("train_inner") != std::string_view::npos ||
        line.find("| epoch ") != std::string_view::npos)) ||
      (line.find("{\"epoch\": ") != std::string_view::npos &&
       line.find("\"num_updates\"") != std::string_view::npos))
    ++fairseq_;
  if (ends_with(t, "]:") && t.find("[batch=") != std::string_view::npos) ++composer_;
  if (starts_with(t, "{\"") && t.find("\"current_steps\"") != std::string_view::npos)
    ++llamafactory_;
  // A notebook's label and table: the header names the table, its rows vote after it.
  if (parse_notebook_label(t)) {
    ++notebook_;
  } else if (auto header = parse_notebook_header(t)) {
    notebook_columns_ = header;
    ++notebook_;
  } else if (notebook_columns_ && parse_notebook_row(t, *notebook_columns_)) {
    ++notebook_;
  }
  // A loop's own step lines vote only as the fallback (result()); the cheap test first.
  if (t.find("tep") != std::string_view::npos || t.find("ter") != std::string_view::npos ||
      t.find("TEP") != std::string_view::npos || t.find("TER") != std::string_view::npos) {
    const auto scan = scan_step_line(t, line_scratch_);
    if (scan && (scan->seconds || (!scan->evaluation && (scan->time || scan->loss)))) ++step_lines_;
  }
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
  // Bars vote as steps; HF metric dicts carry no step number, so they only name the family, and
  // vote only when no format with a step counter is present (DeepSpeed timer lines around HF
  // dicts are DeepSpeed steps).
  std::uint64_t family_votes = family == LogFormat::torchtune ? std::max(tqdm_, torchtune_) : tqdm_;
  const std::uint64_t counted = megatron_ + deepspeed_ + mlx_ + llama_cpp_ + llamafactory_ +
                                keras_ + litgpt_ + nanogpt_ + fairseq_ + composer_ + notebook_;
  // Generic step lines name no program: they count only where no format above has a step line
  // (nanoGPT's "iter N: loss .., time ..ms" or LitGPT's "iter time:" lines are theirs).
  const std::uint64_t generic = family_votes == 0 && counted == 0 ? step_lines_ : 0;
  if (family_votes == 0 && counted == 0) family_votes = hf_dict_;
  std::vector<std::pair<LogFormat, std::uint64_t>> votes = {
      {family, family_votes},
      {LogFormat::megatron, megatron_},
      {LogFormat::deepspeed, deepspeed_},
      {LogFormat::mlx_lm, mlx_},
      {LogFormat::llama_cpp, llama_cpp_},
      {LogFormat::llamafactory, llamafactory_},
      {LogFormat::keras, keras_},
      {LogFormat::litgpt, litgpt_},
      {LogFormat::nanogpt, nanogpt_},
      {LogFormat::fairseq, fairseq_},
      {LogFormat::composer, composer_},
      {LogFormat::notebook, notebook_},
      {LogFormat::step_lines, generic},
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
