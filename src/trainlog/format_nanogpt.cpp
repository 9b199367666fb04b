// nanoGPT train.py and modded-nanogpt, one line per logged iteration:
//   iter 10: loss 3.2202, time 1389.25ms, mfu 10.73%              (nanoGPT, every log_interval)
//   step 0: train loss 4.2874, val loss 4.2823                     (nanoGPT evaluation)
//   saving checkpoint to out-shakespeare-char                      (nanoGPT save)
//   step:10/1750 train_time:12345ms step_avg:1234.50ms             (modded-nanogpt)
//   step:125/1750 val_loss:4.2 train_time:154321ms step_avg:1234.57ms
// nanoGPT's "time" is the wall time of that one iteration (t0 is reset every iteration), so the
// iteration after an evaluation includes it. modded-nanogpt's train_time is cumulative training
// time (evaluation excluded) and step_avg its running mean: seconds per step are the differences of
// train_time between logged steps over the steps between.

#include "base/text.hpp"
#include "trainlog/format_parser.hpp"
#include "trainlog/log_text.hpp"
#include "trainlog/markers.hpp"

namespace sparkops::trainlog {

namespace {

class NanoGptParser final : public FormatParser {
 public:
  explicit NanoGptParser(const ParseContext& ctx) : ctx_(ctx) {}

  void feed(const LogLine& line, SeriesBuilder& out) override {
    const std::string_view t = trim(line.text);
    if (starts_with(t, "iter ")) {
      const auto iter = integer_after(t, "iter ");
      const auto colon = t.find(": loss ");
      const auto time_at = t.find(", time ");
      if (!iter || colon == npos || time_at == npos) return;  // "ite..." cut mid-line
      auto v = number_after(t.substr(time_at), ", time ");
      if (!v || *v < 0) {
        ++out.notes().malformed_records;
        return;
      }
      const std::string_view unit = t.substr(time_at + 7);
      const std::size_t unit_at = unit.find_first_not_of("0123456789.");
      const bool ms = unit_at != npos && unit.substr(unit_at, 2) == "ms";
      emit(*iter, ms ? *v / 1000.0 : *v, TimeSource::printed, number_after(t, ": loss "), line,
           out);
      out.series().unit = ms ? "ms (time)" : "s (time)";
      return;
    }
    if (starts_with(t, "step:")) {  // modded-nanogpt
      const auto step = integer_after(t, "step:");
      const auto train_ms = number_after(t, "train_time:");
      if (!step || !train_ms) return;
      if (const auto slash = t.find('/'); slash != npos && slash < 24) {
        if (const auto total = integer_after(t.substr(slash + 1), ""))
          out.series().total_steps = *total;
      }
      if (t.find("val_loss:") != npos) {
        Marker m;
        m.kind = MarkerKind::eval;
        m.detail = std::string(t.substr(0, 120));
        out.add_marker(std::move(m));
        return;
      }
      std::optional<double> seconds;
      if (last_step_ && *step > *last_step_ && *train_ms >= last_train_ms_)
        seconds = (*train_ms - last_train_ms_) / 1000.0 / static_cast<double>(*step - *last_step_);
      last_step_ = *step;
      last_train_ms_ = *train_ms;
      emit(*step, seconds, TimeSource::elapsed_delta, number_after(t, "train_loss:"), line, out);
      out.series().unit = "ms (train_time, cumulative)";
      return;
    }
    Marker m;
    if (starts_with(t, "step ") && t.find("val loss") != npos) {
      m.kind = MarkerKind::eval;
    } else if (starts_with(t, "saving checkpoint to")) {
      m.kind = MarkerKind::checkpoint;
    } else {
      return;
    }
    m.time = ctx_.sidecar ? line.stamped : std::nullopt;
    m.detail = std::string(t.substr(0, 120));
    out.add_marker(std::move(m));
  }

 private:
  static constexpr auto npos = std::string_view::npos;

  void emit(std::int64_t step, std::optional<double> seconds, TimeSource source,
            std::optional<double> loss, const LogLine& line, SeriesBuilder& out) {
    StepRecord r;
    r.step = step;
    r.seconds = seconds;
    r.loss = loss;
    r.source = seconds ? source : TimeSource::none;
    date_record(ctx_, line, false, r, out);
    out.add_step(r);
  }

  ParseContext ctx_;
  std::optional<std::int64_t> last_step_;
  double last_train_ms_ = 0;
};

}  // namespace

std::unique_ptr<FormatParser> make_nanogpt_parser(const ParseContext& ctx) {
  return std::make_unique<NanoGptParser>(ctx);
}

}  // namespace sparkops::trainlog
