// DeepSpeed engine logs. The throughput timer line every `steps_per_print` steps:
// [2023-08-02 00:41:17,936] [INFO] [timer.py:215:stop] epoch=0/micro_step=10/global_step=10,
// RunningAvgSamplesPerSec=220.69, CurrSamplesPerSec=222.88, MemAllocated=0.07GB,
// MaxMemAllocated=1.36GB Seconds per step: train_batch_size / CurrSamplesPerSec when the config
// dump gave the batch size, else the time between two timer lines divided by the steps between them
// (checkpoint saves in between are included and also reported as markers).

#include "base/text.hpp"
#include "trainlog/format_parser.hpp"
#include "trainlog/log_text.hpp"
#include "trainlog/markers.hpp"

namespace sparkops::trainlog {

namespace {

class DeepSpeedParser final : public FormatParser {
 public:
  explicit DeepSpeedParser(const ParseContext& ctx) : ctx_(ctx) {}

  void feed(const LogLine& line, SeriesBuilder& out) override {
    const std::string_view t = line.text;
    // Config dump: "  train_batch_size ............. 32"
    if (const auto at = t.find("train_batch_size ");
        at != std::string_view::npos && t.find("....") != std::string_view::npos) {
      const std::string_view rest = t.substr(at);
      const auto dots_end = rest.find_first_not_of(". ", std::string("train_batch_size").size());
      if (dots_end != std::string_view::npos) {
        if (const auto v = parse_double(rest.substr(dots_end)); v && *v > 0) batch_ = *v;
      }
      return;
    }
    if (t.find("SamplesPerSec=") == std::string_view::npos ||
        t.find("global_step=") == std::string_view::npos) {
      add_line_marker(t, out);
      return;
    }
    const auto step = integer_after(t, "global_step=");
    if (!step) {
      ++out.notes().malformed_records;
      return;
    }
    StepRecord r;
    r.step = *step;
    std::optional<SystemTime> when = ctx_.sidecar ? line.stamped : leading_timestamp(t);
    if (when) {
      r.time = when;
      out.series().time_basis = ctx_.sidecar ? TimeBasis::sidecar : TimeBasis::log_timestamps;
    }
    const auto curr = number_after(t, "CurrSamplesPerSec=");
    if (batch_ && curr && *curr > 0) {
      r.seconds = *batch_ / *curr;
    } else if (when && last_time_ && last_step_ && *step > *last_step_) {
      r.seconds = seconds_between(*last_time_, *when) / static_cast<double>(*step - *last_step_);
      if (*r.seconds < 0) r.seconds.reset();
    }
    if (when) last_time_ = when;
    last_step_ = *step;
    out.add_step(r);
  }

 private:
  ParseContext ctx_;
  std::optional<double> batch_;
  std::optional<SystemTime> last_time_;
  std::optional<std::int64_t> last_step_;
};

}  // namespace

std::unique_ptr<FormatParser> make_deepspeed_parser(const ParseContext& ctx) {
  return std::make_unique<DeepSpeedParser>(ctx);
}

}  // namespace sparkops::trainlog
