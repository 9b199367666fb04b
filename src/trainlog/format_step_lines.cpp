// Training loops that print their own step lines (nanochat, build-nanogpt, llm.c, torchtitan,
// MaxText, verl, PaddleNLP and hand-written loops alike): each line read by the fields it names
// (step_line_scan.hpp). The time per step is the one the line prints (`printed`; a rate is turned
// into seconds per step); a line that prints none but carries a timestamp takes the difference to
// the previous step line's timestamp over the steps between (`wall_delta`: torchtitan logs every
// `log_freq` steps with tokens per second but no time). Lines that report an evaluation, and the
// checkpoint/evaluation phrases every format shares (markers.hpp), are markers.

#include "base/text.hpp"
#include "trainlog/format_parser.hpp"
#include "trainlog/log_text.hpp"
#include "trainlog/markers.hpp"
#include "trainlog/step_line_scan.hpp"

namespace sparkops::trainlog {

namespace {

class StepLinesParser final : public FormatParser {
 public:
  explicit StepLinesParser(const ParseContext& ctx) : ctx_(ctx) {}

  void feed(const LogLine& line, SeriesBuilder& out) override {
    const std::optional<SystemTime> stamped = ctx_.sidecar ? line.stamped : std::nullopt;
    const auto scan = scan_step_line(line.text, scratch_);
    if (!scan) {
      add_line_marker(trim(line.text), out, stamped);
      return;
    }
    if (scan->evaluation && !scan->seconds) {
      Marker m;
      m.kind = MarkerKind::eval;
      m.detail = std::string(trim(line.text).substr(0, 120));
      m.time = stamped ? stamped : scan->time;
      out.add_marker(std::move(m));
      return;
    }
    if (scan->total) out.series().total_steps = *scan->total;
    StepRecord r;
    r.step = scan->step;
    r.loss = scan->loss;
    if (scan->seconds) {
      r.seconds = scan->seconds;
      r.source = TimeSource::printed;
      printed_ = true;
    } else if (scan->time && last_time_ && last_step_ && scan->step > *last_step_) {
      const double between = seconds_between(*last_time_, *scan->time);
      if (between >= 0) {
        r.seconds = between / static_cast<double>(scan->step - *last_step_);
        r.source = TimeSource::wall_delta;
      }
    }
    if (!date_record(ctx_, line, false, r, out) && scan->time) {
      r.time = scan->time;
      out.series().time_basis = TimeBasis::log_timestamps;
    }
    if (scan->time) last_time_ = scan->time;
    last_step_ = scan->step;
    out.add_step(r);
  }

  void finish(SeriesBuilder& out) override {
    // Timestamp differences need no unit: the sources line names them.
    if (printed_) out.series().unit = "the line's time per step (dt, step_time, ms, step/s ...)";
  }

 private:
  ParseContext ctx_;
  std::string scratch_;
  std::optional<std::int64_t> last_step_;
  std::optional<SystemTime> last_time_;
  bool printed_ = false;
};

}  // namespace

std::unique_ptr<FormatParser> make_step_lines_parser(const ParseContext& ctx) {
  return std::make_unique<StepLinesParser>(ctx);
}

}  // namespace sparkops::trainlog
