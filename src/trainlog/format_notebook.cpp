// Hugging Face Trainer in a notebook (Jupyter, Colab: Unsloth's and TRL's notebooks), copied from
// the rendered output. transformers `utils/notebook.py` draws, instead of a tqdm bar, an HTML
// progress bar whose label is
//   [ 25/60 02:10 < 03:02, 0.19 it/s, Epoch 0.40/1]   (NotebookProgressBar.update_bar, running)
//   [60/60 05:12, Epoch 0/1]                          (the last update: no remaining time)
// (value padded to the width of the total; times by format_time: "MM:SS", "H:MM:SS") above the
// metrics table NotebookTrainingTracker.write_line fills, which a copy turns into lines of cells:
//   Step	Training Loss                (or "Epoch", and "Validation Loss" when evaluating)
//   1	1.815900
//   10	1.234500	1.345600
// A row is a step with its training loss ("No log" when none); a row with a validation loss is an
// evaluation at that step. The table holds no time per step: the label's elapsed time over its
// steps is the run's mean (`train_runtime_seconds`, the baseline); no slowdown can be measured.

#include "base/text.hpp"
#include "trainlog/format_parser.hpp"
#include "trainlog/markers.hpp"
#include "trainlog/notebook_text.hpp"

namespace sparkops::trainlog {

namespace {

class NotebookParser final : public FormatParser {
 public:
  explicit NotebookParser(const ParseContext& ctx) : ctx_(ctx) {}

  void feed(const LogLine& line, SeriesBuilder& out) override {
    const std::string_view t = trim(line.text);
    if (const auto label = parse_notebook_label(t)) {
      out.series().total_steps = label->total;
      if (label->elapsed_seconds && label->value > 0) label_ = label;
      return;
    }
    if (const auto header = parse_notebook_header(t)) {
      columns_ = *header;
      return;
    }
    if (columns_) {
      if (const auto row = parse_notebook_row(t, *columns_)) {
        if (row->validation_loss) {
          Marker m;
          m.kind = MarkerKind::eval;
          m.step = row->step;
          m.detail = std::string(t.substr(0, 120));
          m.time = ctx_.sidecar ? line.stamped : std::nullopt;
          out.add_marker(std::move(m));
        }
        StepRecord r;
        r.step = row->step;
        r.loss = row->training_loss;
        date_record(ctx_, line, false, r, out);
        out.add_step(r);
        return;
      }
    }
    add_line_marker(t, out, ctx_.sidecar ? line.stamped : std::nullopt);
  }

  // The label's mean time per step since the start, over the table's steps: train_runtime / last
  // step is the baseline the diagnosis takes when no step has a time (elapsed itself when the
  // label shows the last step).
  void finish(SeriesBuilder& out) override {
    const auto last = out.last_step();
    if (!label_ || !last || *last <= 0) return;
    out.series().train_runtime_seconds =
        *label_->elapsed_seconds / static_cast<double>(label_->value) * static_cast<double>(*last);
    out.series().unit = "notebook label: elapsed / steps";
  }

 private:
  ParseContext ctx_;
  std::optional<NotebookColumns> columns_;
  std::optional<NotebookLabel> label_;  // the last label that showed a time
};

}  // namespace

std::unique_ptr<FormatParser> make_notebook_parser(const ParseContext& ctx) {
  return std::make_unique<NotebookParser>(ctx);
}

}  // namespace sparkops::trainlog
