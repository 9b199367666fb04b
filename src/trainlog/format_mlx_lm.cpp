// MLX-LM (mlx_lm.lora): one line per report interval, the rate averaged over it.
//   Iter 10: Train loss 4.391, Learning Rate 2.000e-05, It/sec 1.609, Tokens/sec 600.696, ...
//   Iter 200: Val loss 1.864, Val took 8.267s
//   Iter 100: Saved adapter weights to adapters/adapters.safetensors and ...

#include "base/text.hpp"
#include "trainlog/format_parser.hpp"
#include "trainlog/log_text.hpp"

namespace sparkops::trainlog {

namespace {

class MlxLmParser final : public FormatParser {
 public:
  explicit MlxLmParser(const ParseContext& ctx) : ctx_(ctx) {}

  void feed(const LogLine& line, SeriesBuilder& out) override {
    const std::string_view t = trim(line.text);
    if (!starts_with(t, "Iter ")) return;
    const auto iter = integer_after(t, "Iter ");
    if (!iter) return;
    if (t.find("Train loss") != std::string_view::npos) {
      const auto rate = number_after(t, "It/sec ");
      StepRecord r;
      r.step = *iter;
      if (rate && *rate > 0) r.seconds = 1.0 / *rate;
      r.loss = number_after(t, "Train loss ");
      date_record(ctx_, line, false, r, out);
      out.add_step(r);
      return;
    }
    Marker m;
    if (t.find("Val loss") != std::string_view::npos) {
      m.kind = MarkerKind::eval;
      m.duration_seconds = number_after(t, "Val took ");
    } else if (t.find("Saved adapter weights") != std::string_view::npos) {
      m.kind = MarkerKind::checkpoint;
    } else {
      return;
    }
    m.step = *iter;
    m.time = ctx_.sidecar ? line.stamped : std::nullopt;
    m.detail = std::string(t);
    out.add_marker(std::move(m));
  }

 private:
  ParseContext ctx_;
};

}  // namespace

std::unique_ptr<FormatParser> make_mlx_lm_parser(const ParseContext& ctx) {
  return std::make_unique<MlxLmParser>(ctx);
}

}  // namespace sparkops::trainlog
