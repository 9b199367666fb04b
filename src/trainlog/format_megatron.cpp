// Megatron-LM: one line per log interval; the time is the mean over the interval.
//  iteration       17/  500000 | consumed samples:          544 | elapsed time per iteration (ms):
//  1355.9 | ...
// Wall time: "[before the start of training step] datetime: 2023-08-16 11:59:58" anchors the
// cumulative sum of the intervals; a line that starts with its own timestamp uses that instead.

#include "base/text.hpp"
#include "trainlog/format_parser.hpp"
#include "trainlog/log_text.hpp"
#include "trainlog/markers.hpp"

namespace sparkops::trainlog {

namespace {

class MegatronParser final : public FormatParser {
 public:
  explicit MegatronParser(const ParseContext& ctx) : ctx_(ctx) {}

  void feed(const LogLine& line, SeriesBuilder& out) override {
    const std::string_view t = line.text;
    if (const auto at = t.find("datetime: ");
        at != std::string_view::npos &&
        t.find("[before the start of training step]") != std::string_view::npos) {
      if (const auto ts = leading_timestamp(t.substr(at + 10))) {
        anchor_ = *ts;
        cumulative_ = 0;
      }
      return;
    }
    const auto it_at = t.find("iteration ");
    if (it_at == std::string_view::npos ||
        t.find("elapsed time per iteration (ms):") == std::string_view::npos) {
      add_line_marker(t, out, line.stamped);
      return;
    }
    const auto iter = integer_after(t.substr(it_at), "iteration ");
    const auto ms = number_after(t, "elapsed time per iteration (ms):");
    if (!iter || !ms || *ms < 0) {
      ++out.notes().malformed_records;
      return;
    }
    if (const auto total = integer_after(t.substr(it_at), "/")) out.series().total_steps = *total;
    const std::int64_t dn = last_iter_ && *iter > *last_iter_ ? *iter - *last_iter_ : 1;
    cumulative_ += static_cast<double>(dn) * *ms / 1000.0;
    last_iter_ = *iter;
    StepRecord r;
    r.step = *iter;
    r.seconds = *ms / 1000.0;
    r.elapsed_seconds = cumulative_;
    // training_log: "| lm loss: 2.345678E+00 |" (the mean over the log interval)
    r.loss = number_after(t, "lm loss:");
    if (!date_record(ctx_, line, true, r, out) && anchor_) {
      r.time = add_seconds(*anchor_, cumulative_);
      out.series().time_basis = TimeBasis::log_timestamps;
    }
    out.add_step(r);
  }

 private:
  ParseContext ctx_;
  std::optional<SystemTime> anchor_;
  std::optional<std::int64_t> last_iter_;
  double cumulative_ = 0;
};

}  // namespace

std::unique_ptr<FormatParser> make_megatron_parser(const ParseContext& ctx) {
  return std::make_unique<MegatronParser>(ctx);
}

}  // namespace sparkops::trainlog
