#pragma once
// Finds every tqdm progress update in a record. tqdm prints
//   "{desc}: {pct}%|{bar}| {n}/{total} [{elapsed}<{remaining}, {rate}{postfix}]"
// or, without a total, "{desc}: {n}it [{elapsed}, {rate}{postfix}]". Bars drawn with a custom
// bar_format may leave the rate out: NeMo's "[4:26:54<2:56:09, v_num=0, reduced_train_loss=...]"
// (postfix only) or "[00:12<00:30]". Several updates may share one
// record when the '\r' between them was lost (copied logs), e.g.
//   "  1%|          | 10/1755 [03:33<10:21:09, 21.36s/it]  1%|          | 11/1755 [03:54<..."

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace sparkops::trainlog {

struct TqdmUpdate {
  std::string_view desc;  // text before the percentage (trailing ':' removed)
  std::int64_t n = 0;
  std::optional<std::int64_t> total;
  double elapsed_seconds = 0;
  std::optional<double> seconds_per_it;  // from "21.99s/it" or 1 / "4.50it/s"; none for "?it/s"
  bool rate_inverted = false;  // the rate was printed as it/s (tqdm switches below 1 s/it)
  std::string_view postfix;    // text after the rate inside the brackets
  std::size_t begin = 0;       // where the update starts in the record
  std::size_t n_begin = 0;     // where n's digits start
  std::size_t end = 0;         // one past its closing ']'
};

// Clears `out` and appends the iteration-unit updates found in `line` (bars counting bytes or other
// units are skipped).
void scan_tqdm(std::string_view line, std::vector<TqdmUpdate>& out);

// A tqdm redraw ('\r' then the bar again) of a record that scan_tqdm found to be exactly one
// update ending the record: `line` starts with that record's text before n (prefix_len bytes,
// which hold no '['). True when scan_tqdm(line) would give exactly one update, ending the record,
// with n starting at prefix_len; `u` is then that update except desc and begin (0), which are
// the earlier record's, as their text is the same prefix. False when scan_tqdm must decide.
// Only the counters, times and rate after the prefix are parsed.
bool scan_tqdm_redraw(std::string_view line, std::size_t prefix_len, TqdmUpdate& u);

// scan_tqdm_redraw's first try: one pass over tqdm's default counters, clocks and rate (the shape
// format_meter prints), each field read where it is found. True only when it read the redraw by
// itself, and then `u` is what scan_tqdm_redraw gives; false for anything else (another bar_format,
// a clock with days, a rate like "1.2ks/it", "nan" or "1e3"), which the general parse decides.
bool scan_tqdm_redraw_fast(std::string_view line, std::size_t prefix_len, TqdmUpdate& u);

// What a bar's description says it is. Training loops draw their bar without a description (HF
// Trainer, TRL, axolotl, LLaMA-Factory), with "Epoch N" (Lightning, NeMo), "E|S|Loss: x"
// (torchtune) or "Train" (ms-swift); the other bars in training logs are evaluation loops
// (validation, ms-swift "Val", MLX-LM "Calculating loss") or start-up and data work (weights,
// datasets). A description of neither kind stays a candidate (custom loops name their bars).
enum class BarRole { candidate, eval, other };
BarRole classify_bar(std::string_view desc);

// The step count of the transformers Trainer banner "Total optimization steps = 1,755".
std::optional<std::int64_t> trainer_banner_total(std::string_view line);

// Which of two candidate bars is the training bar, for analyze and watch alike: the one whose
// total is the Trainer banner's step count, else the one that reached a new step more often (HF's
// undescribed evaluation bar, nested inside training, restarts from 0 every time), else the larger
// total. `advances` counts the updates that went beyond every earlier step of that bar.
struct BarStanding {
  std::optional<std::int64_t> total;
  std::uint64_t advances = 0;
};
bool prefer_training_bar(const BarStanding& a, const BarStanding& b,
                         std::optional<std::int64_t> banner_total);

}  // namespace sparkops::trainlog
