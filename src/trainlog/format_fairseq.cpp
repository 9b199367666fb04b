// fairseq training logs (fairseq/logging/progress_bar.py, fairseq_cli/train.py). The simple and
// tqdm progress formats print one line per log_interval with the metrics as key=value:
//   2021-03-01 12:00:00 | INFO | train_inner | epoch 001:    100 / 1000 loss=8.21, ppl=296.1,
//   wps=12345.6, ups=2.71, wpb=4550.3, bsz=128, num_updates=100, lr=1e-05, gnorm=1.9,
//   train_wall=36, gb_free=10.2, wall=40
// the json format one dict per interval: {"epoch": 1, "update": 0.1, "loss": "8.21", ...,
// "num_updates": "100", ..., "wall": "40"}. num_updates counts optimizer updates. Seconds per
// update: the difference of `wall` (seconds since start) over the updates between two lines when
// the interval is known, else 1 / ups (the mean rate over the interval). Validation lines ("valid
// on 'valid' subset") and "Saved checkpoint ... (writing took 2.3 seconds)" are markers.

#include "base/text.hpp"
#include "trainlog/format_parser.hpp"
#include "trainlog/log_text.hpp"
#include "trainlog/markers.hpp"

namespace sparkops::trainlog {

namespace {

// "key=12.3" or "\"key\": \"12.3\"" or "\"key\": 12.3".
std::optional<double> metric(std::string_view t, std::string_view key) {
  std::size_t from = 0;
  while (from < t.size()) {
    const auto at = t.find(key, from);
    if (at == std::string_view::npos) return std::nullopt;
    from = at + key.size();
    const bool starts =
        at == 0 || t[at - 1] == ' ' || t[at - 1] == ',' || t[at - 1] == '"' || t[at - 1] == '|';
    if (!starts) continue;
    std::size_t p = at + key.size();
    if (p < t.size() && t[p] == '"') ++p;
    if (p < t.size() && (t[p] == '=' || t[p] == ':')) {
      ++p;
      while (p < t.size() && (t[p] == ' ' || t[p] == '"')) ++p;
      return number_after(t.substr(p), "");
    }
  }
  return std::nullopt;
}

class FairseqParser final : public FormatParser {
 public:
  explicit FairseqParser(const ParseContext& ctx) : ctx_(ctx) {}

  void feed(const LogLine& line, SeriesBuilder& out) override {
    const std::string_view t = line.text;
    if (t.find("valid on '") != std::string_view::npos ||
        t.find("| valid |") != std::string_view::npos) {
      add(MarkerKind::eval, std::nullopt, t, line, out);
      return;
    }
    // checkpoint_utils.save_checkpoint: "Saved checkpoint {} (epoch {} @ {} updates, score {})
    // (writing took {} seconds)"; the lower-case spelling is accepted too.
    if (t.find("Saved checkpoint ") != std::string_view::npos ||
        t.find("saved checkpoint ") != std::string_view::npos) {
      add(MarkerKind::checkpoint, number_after(t, "(writing took "), t, line, out);
      return;
    }
    const auto updates = metric(t, "num_updates");
    const bool train_line = t.find("train_inner") != std::string_view::npos ||
                            t.find("| epoch ") != std::string_view::npos ||
                            t.find("\"update\"") != std::string_view::npos;
    if (!updates || !train_line) {
      if (const auto kind = detect_marker(t)) add(*kind, std::nullopt, t, line, out);
      return;
    }
    // num_updates is a count: a whole number in [0, 2^53], else the line is not a step (a float
    // cast of 1e300 was undefined behaviour).
    const auto exact = exact_integer(*updates);
    if (!exact || *exact < 0) return;
    const std::int64_t step = *exact;
    const auto wall = metric(t, "wall");
    const auto ups = metric(t, "ups");
    StepRecord r;
    r.step = step;
    r.loss = metric(t, "loss");  // "loss=8.21" (simple) / "\"loss\": \"8.21\"" (json)
    if (wall && last_wall_ && last_step_ && step > *last_step_ && *wall >= *last_wall_) {
      r.seconds = (*wall - *last_wall_) / static_cast<double>(step - *last_step_);
      r.source = TimeSource::elapsed_delta;
    } else if (ups && *ups > 0) {
      r.seconds = 1.0 / *ups;
      r.source = TimeSource::running_mean;
    }
    if (wall) last_wall_ = wall;
    last_step_ = step;
    date_record(ctx_, line, true, r, out);
    out.series().unit = "ups / wall";
    out.add_step(r);
  }

 private:
  void add(MarkerKind kind, std::optional<double> duration, std::string_view t, const LogLine& line,
           SeriesBuilder& out) {
    Marker m;
    m.kind = kind;
    m.duration_seconds = duration;
    m.time = ctx_.sidecar ? line.stamped : leading_timestamp(t);
    m.detail = std::string(trim(t.substr(0, 160)));
    out.add_marker(std::move(m));
  }

  ParseContext ctx_;
  std::optional<double> last_wall_;
  std::optional<std::int64_t> last_step_;
};

}  // namespace

std::unique_ptr<FormatParser> make_fairseq_parser(const ParseContext& ctx) {
  return std::make_unique<FairseqParser>(ctx);
}

}  // namespace sparkops::trainlog
