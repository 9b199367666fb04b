// LLaMA-Factory trainer_log.jsonl, one JSON object per logging step:
// {"current_steps": 10, "total_steps": 6566, "loss": 0.8548, ..., "elapsed_time": "0:02:12",
// "remaining_time": "1 day, 0:08:23"} Seconds per step: elapsed time between two logged steps over
// the steps between them. A step logged twice keeps its first line.

#include <nlohmann/json.hpp>

#include "base/text.hpp"
#include "trainlog/format_parser.hpp"
#include "trainlog/log_text.hpp"

namespace sparkops::trainlog {

namespace {

class LlamaFactoryParser final : public FormatParser {
 public:
  explicit LlamaFactoryParser(const ParseContext& ctx) : ctx_(ctx) {}

  void feed(const LogLine& line, SeriesBuilder& out) override {
    const std::string_view t = trim(line.text);
    if (t.empty() || t.front() != '{') return;
    const auto j = nlohmann::json::parse(t, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      ++out.notes().malformed_records;
      return;
    }
    const auto step_it = j.find("current_steps");
    if (step_it == j.end() || !step_it->is_number_integer()) return;
    const auto step = step_it->get<std::int64_t>();
    if (const auto tot = j.find("total_steps"); tot != j.end() && tot->is_number_integer()) {
      out.series().total_steps = tot->get<std::int64_t>();
    }
    std::optional<double> elapsed;
    if (const auto e = j.find("elapsed_time"); e != j.end() && e->is_string()) {
      elapsed = parse_clock_seconds(e->get_ref<const std::string&>());
    }
    if (j.contains("eval_loss")) {
      Marker m;
      m.kind = MarkerKind::eval;
      m.step = step;
      m.detail = std::string(t.substr(0, 120));
      out.add_marker(std::move(m));
      return;
    }
    if (!j.contains("loss")) return;
    if (last_step_ && step == *last_step_) return;  // the same step logged again
    StepRecord r;
    r.step = step;
    r.elapsed_seconds = elapsed;
    if (const auto& loss = j["loss"]; loss.is_number()) r.loss = loss.get<double>();
    if (elapsed) {
      const double base_elapsed = last_step_ && step > *last_step_ ? last_elapsed_ : 0.0;
      const std::int64_t base_step = last_step_ && step > *last_step_ ? *last_step_ : 0;
      if (step > base_step && *elapsed >= base_elapsed) {
        r.seconds = (*elapsed - base_elapsed) / static_cast<double>(step - base_step);
      }
      last_elapsed_ = *elapsed;
    }
    date_record(ctx_, line, false, r, out);
    last_step_ = step;
    out.add_step(r);
  }

 private:
  ParseContext ctx_;
  std::optional<std::int64_t> last_step_;
  double last_elapsed_ = 0;
};

}  // namespace

std::unique_ptr<FormatParser> make_llamafactory_parser(const ParseContext& ctx) {
  return std::make_unique<LlamaFactoryParser>(ctx);
}

}  // namespace sparkops::trainlog
