// MosaicML Composer's ConsoleLogger (composer/loggers/console_logger.py): every log interval a
// header naming the batch, then one metric per line, tab-indented:
//   [batch=10/100]:
//   	 Train time/batch: 9
//   	 Train loss/train/total: 2.3021
//   	 Train wall_clock/train: 12.3456
//   	 Train time/train: 0.0034
// (log_to_console + _get_progress_string at commit 02c872e). When max_duration is in epochs the
// header is "[epoch=2][batch=10/100]:" with the batch counted within the epoch: the step is then
// (epoch - 1) x batches per epoch + batch; when it is in batches, "[batch=10/1000]:" counts from
// the start. A header without metrics has no colon. Durations in tokens or samples
// ("[token=1024/100000]") are not batches and give no steps. Seconds per batch: the difference of
// the SpeedMonitor's cumulative training wall clock
// ("wall_clock/train" in seconds, or "time/train" in hours) between two headers over the batches
// between. Evaluation blocks ("Eval metrics/...") are markers.

#include "base/text.hpp"
#include "trainlog/format_parser.hpp"
#include "trainlog/log_text.hpp"
#include "trainlog/markers.hpp"

namespace sparkops::trainlog {

namespace {

class ComposerParser final : public FormatParser {
 public:
  explicit ComposerParser(const ParseContext& ctx) : ctx_(ctx) {}

  void feed(const LogLine& line, SeriesBuilder& out) override {
    const std::string_view t = trim(line.text);
    const auto at = t.find("[batch=");
    if (at != std::string_view::npos && (ends_with(t, "]:") || ends_with(t, "]"))) {
      flush(out);
      auto n = integer_after(t.substr(at), "[batch=");
      if (!n) return;
      std::optional<std::int64_t> total;
      if (const auto slash = t.find('/', at); slash != std::string_view::npos) {
        total = integer_after(t.substr(slash + 1), "");
      }
      const auto epoch_at = t.find("[epoch=");
      if (epoch_at != std::string_view::npos && epoch_at < at) {
        const auto epoch = integer_after(t.substr(epoch_at), "[epoch=");
        if (!epoch || *epoch < 1 || !total || *total <= 0) {
          ++out.notes().malformed_records;
          return;
        }
        n = (*epoch - 1) * *total + *n;
      } else if (total) {
        out.series().total_steps = *total;
      }
      block_ = Block{*n, std::nullopt, std::nullopt, line.stamped, false};
      return;
    }
    if (!block_) {
      if (const auto kind = detect_marker(t)) {
        Marker m;
        m.kind = *kind;
        m.detail = std::string(t.substr(0, 120));
        out.add_marker(std::move(m));
      }
      return;
    }
    if (starts_with(t, "Eval ")) block_->eval = true;
    // ConsoleLogger: "\t Train loss/train/total: 7.1234"
    if (const auto loss = number_after(t, "Train loss/train/total:")) block_->loss = loss;
    if (const auto v = number_after(t, "wall_clock/train:")) {
      block_->train_seconds = *v;
    } else if (const auto h = number_after(t, "time/train:"); h && !block_->train_seconds) {
      block_->train_seconds = *h * 3600.0;
    }
  }

  void finish(SeriesBuilder& out) override {
    flush(out);
    out.series().unit = "wall_clock/train (cumulative)";
  }

 private:
  struct Block {
    std::int64_t batch = 0;
    std::optional<double> train_seconds;
    std::optional<double> loss;
    std::optional<SystemTime> stamped;
    bool eval = false;
  };

  void flush(SeriesBuilder& out) {
    if (!block_) return;
    const Block b = *block_;
    block_.reset();
    StepRecord r;
    r.step = b.batch;
    r.loss = b.loss;
    if (b.train_seconds && last_seconds_ && last_batch_ && b.batch > *last_batch_ &&
        *b.train_seconds >= *last_seconds_) {
      r.seconds = (*b.train_seconds - *last_seconds_) / static_cast<double>(b.batch - *last_batch_);
      r.source = TimeSource::elapsed_delta;
    }
    if (b.train_seconds) last_seconds_ = b.train_seconds;
    last_batch_ = b.batch;
    if (ctx_.sidecar && b.stamped) {
      r.time = b.stamped;
      out.series().time_basis = TimeBasis::sidecar;
    }
    out.add_step(r);
    if (b.eval) {
      Marker m;
      m.kind = MarkerKind::eval;
      m.detail = "Composer eval metrics";
      out.add_marker(std::move(m));
    }
  }

  ParseContext ctx_;
  std::optional<Block> block_;
  std::optional<double> last_seconds_;
  std::optional<std::int64_t> last_batch_;
};

}  // namespace

std::unique_ptr<FormatParser> make_composer_parser(const ParseContext& ctx) {
  return std::make_unique<ComposerParser>(ctx);
}

}  // namespace sparkops::trainlog
