// llama.cpp `finetune` (train_opt_callback), one line per iteration:
//   train_opt_callback: iter=     1 sample=9/27520 sched=0.010000 loss=3.175470 dt=00:00:34
//   eta=03:47:12 |->
// dt is the time of that iteration (HH:MM:SS); newer builds may print "dt=512.3ms".

#include "base/text.hpp"
#include "trainlog/format_parser.hpp"
#include "trainlog/log_text.hpp"
#include "trainlog/markers.hpp"

namespace sparkops::trainlog {

namespace {

std::optional<double> parse_dt(std::string_view line) {
  const auto at = line.find("dt=");
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view v = line.substr(at + 3);
  v = v.substr(0, v.find(' '));
  if (v.find(':') != std::string_view::npos) return parse_clock_seconds(v);
  if (ends_with(v, "ms")) {
    const auto x = parse_double(v.substr(0, v.size() - 2));
    return x ? std::optional<double>(*x / 1000.0) : std::nullopt;
  }
  if (ends_with(v, "s")) return parse_double(v.substr(0, v.size() - 1));
  return parse_double(v);
}

class LlamaCppParser final : public FormatParser {
 public:
  explicit LlamaCppParser(const ParseContext& ctx) : ctx_(ctx) {}

  void feed(const LogLine& line, SeriesBuilder& out) override {
    const std::string_view t = line.text;
    const auto at = t.find("train_opt_callback:");
    if (at == std::string_view::npos) {
      add_line_marker(t, out);
      return;
    }
    const auto iter = integer_after(t.substr(at), "iter=");
    if (!iter) {
      ++out.notes().malformed_records;
      return;
    }
    StepRecord r;
    r.step = *iter;
    r.seconds = parse_dt(t);
    if (r.seconds && *r.seconds <= 0) r.seconds.reset();
    r.loss = number_after(t, " loss=");
    date_record(ctx_, line, false, r, out);
    if (*iter == 0 && !r.seconds) return;  // the line printed before the first iteration
    out.add_step(r);
  }

 private:
  ParseContext ctx_;
};

}  // namespace

std::unique_ptr<FormatParser> make_llama_cpp_parser(const ParseContext& ctx) {
  return std::make_unique<LlamaCppParser>(ctx);
}

}  // namespace sparkops::trainlog
