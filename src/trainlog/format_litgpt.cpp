// LitGPT / lit-gpt fine-tuning and pretraining scripts: one line per micro-batch iteration.
//   iter 31 step 1: loss 1.9221, iter time: 196.06ms (optimizer.step)                  (lit-gpt)
//   Epoch 1 | iter 32 step 1 | loss train: 1.922, val: n/a | iter time: 196.06 ms (step)  (litgpt)
// "iter" counts micro-batches, "step" the optimizer steps completed; "(optimizer.step)" / "(step)"
// marks the iteration that ended an accumulation window. "iter time" covers the forward/backward
// of that micro-batch only (evaluation, checkpointing and logging are outside it), so records are
// micro-steps and an optimizer step takes gradient_accumulation_iters of them: batch_size /
// micro_batch_size from the hyperparameter dict the script prints first, else the iteration count
// at the first step boundary. "Validating ..." / "val loss" and "Saving ... weights" are markers.

#include "base/text.hpp"
#include "trainlog/format_parser.hpp"
#include "trainlog/log_text.hpp"
#include "trainlog/markers.hpp"

namespace sparkops::trainlog {

namespace {

class LitGptParser final : public FormatParser {
 public:
  explicit LitGptParser(const ParseContext& ctx) : ctx_(ctx) {}

  void feed(const LogLine& line, SeriesBuilder& out) override {
    const std::string_view t = trim(line.text);
    if (!accumulation_ && starts_with(t, "{") && t.find("'micro_batch_size': ") != npos) {
      const auto batch = integer_after(t, "'batch_size': ");
      const auto micro = integer_after(t, "'micro_batch_size': ");
      if (batch && micro && *micro > 0 && *batch >= *micro && *batch % *micro == 0)
        accumulation_ = *batch / *micro;
      return;
    }
    const auto at = t.find("iter ");
    const auto time_at = t.find("iter time:");
    if (at == npos || time_at == npos || time_at == at) {
      marker(t, line, out);
      return;
    }
    const auto iter = integer_after(t.substr(at), "iter ");
    const auto step = integer_after(t.substr(at), " step ");
    auto ms = number_after(t.substr(time_at), "iter time:");
    if (!iter || !step || !ms || *ms < 0) {
      ++out.notes().malformed_records;
      return;
    }
    const std::string_view after = t.substr(time_at + 10);
    if (after.find("ms") == npos) *ms *= 1000.0;  // a build that prints seconds ("1.2s")
    const bool boundary = t.find("(optimizer.step)") != npos || t.find("(step)") != npos;
    if (boundary && !accumulation_ && *step > 0) {
      // lit-gpt counts iterations from 0 ("iter 31 step 1" closes 32 of them); litgpt from 1.
      const std::int64_t iters = t.find("(optimizer.step)") != npos ? *iter + 1 : *iter;
      if (iters % *step == 0) accumulation_ = iters / *step;
    }
    StepRecord r;
    r.step = *iter;
    r.optimizer_step = *step;
    r.seconds = *ms / 1000.0;
    r.source = TimeSource::printed;
    // "iter 31 step 1: loss 1.9221, ..." (lit-gpt) / "... | loss train: 1.922, val: n/a | ..."
    r.loss = number_after(t, "loss train:");
    if (!r.loss) r.loss = number_after(t, ": loss ");
    date_record(ctx_, line, false, r, out);
    out.add_step(r);
  }

  void finish(SeriesBuilder& out) override {
    out.series().micro_steps_per_step = accumulation_.value_or(1);
    out.series().unit = "ms per micro-batch (iter time)";
  }

 private:
  static constexpr auto npos = std::string_view::npos;

  void marker(std::string_view t, const LogLine& line, SeriesBuilder& out) {
    Marker m;
    if (starts_with(t, "Validating") || t.find("val loss") != npos) {
      m.kind = MarkerKind::eval;
    } else if (starts_with(t, "Saving") && t.find("weights") != npos) {
      m.kind = MarkerKind::checkpoint;
    } else if (const auto kind = detect_marker(t)) {
      m.kind = *kind;
    } else {
      return;
    }
    m.time = ctx_.sidecar ? line.stamped : std::nullopt;
    m.detail = std::string(t.substr(0, 120));
    out.add_marker(std::move(m));
  }

  ParseContext ctx_;
  std::optional<std::int64_t> accumulation_;
};

}  // namespace

std::unique_ptr<FormatParser> make_litgpt_parser(const ParseContext& ctx) {
  return std::make_unique<LitGptParser>(ctx);
}

}  // namespace sparkops::trainlog
