// Keras / TensorFlow `model.fit(verbose=1)` progress bar (keras/utils/progbar.py, Keras 2 and 3).
// Each epoch starts with "Epoch 2/5"; the bar counts steps within the epoch and its last line
// carries the epoch's total time and the mean time per step, in the unit Keras picked:
//   300/300 [==============================] - 251s 837ms/step - loss: 0.0959 - val_loss: 0.0878
//   300/300 ━━━━━━━━━━━━━━━━━━━━ 251s 837ms/step - loss: 0.0959 - val_loss: 0.0878     (Keras 3)
//    45/300 [==>...........................] - ETA: 3:21 - loss: 0.4012                  (Keras 2)
// "%.0fs/step" at 1 s or more, "%.0fms/step" from 1 ms, "%.0fus/step" below. The per-step time is
// the mean since the epoch began (a running mean). Steps are counted across epochs (epoch k's step
// n is (k-1) x steps-per-epoch + n). "val_" metrics on the last line mean a validation pass ran at
// the end of that epoch. Lines counted in samples ("85us/sample", TF 1.x on arrays) are not steps.

#include "base/text.hpp"
#include "trainlog/format_parser.hpp"
#include "trainlog/log_text.hpp"
#include "trainlog/markers.hpp"

namespace sparkops::trainlog {

namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

class KerasParser final : public FormatParser {
 public:
  explicit KerasParser(const ParseContext& ctx) : ctx_(ctx) {}

  void feed(const LogLine& line, SeriesBuilder& out) override {
    const std::string_view t = trim(line.text);
    if (starts_with(t, "Epoch ")) {
      const auto k = integer_after(t, "Epoch ");
      const auto slash = t.find('/');
      if (k && slash != std::string_view::npos) {
        if (epoch_ && *k != *epoch_) offset_ += epoch_steps_;
        epoch_ = *k;
        epoch_total_ = integer_after(t.substr(slash + 1), "");
      }
      return;
    }
    // "n/N" then the bar.
    std::size_t p = 0;
    while (p < t.size() && is_digit(t[p])) ++p;
    if (p == 0 || p >= t.size() || t[p] != '/') return;
    const auto n = integer_after(t, "");
    const auto total = integer_after(t.substr(p + 1), "");
    if (!n || !total || *n <= 0) return;
    std::size_t q = p + 1;
    while (q < t.size() && is_digit(t[q])) ++q;
    const std::string_view rest = t.substr(q);
    const bool bar =
        starts_with(trim(rest), "[") || rest.find("\xe2\x94\x81") != std::string_view::npos;
    if (!bar) return;
    if (rest.find("/sample") != std::string_view::npos) return;
    epoch_steps_ = *total;
    StepRecord r;
    r.step = offset_ + *n;
    r.loss = number_after(rest, "- loss: ");  // progbar: " - loss: 0.0959 - val_loss: ..."
    if (const auto per = per_step_seconds(rest)) {
      r.seconds = *per;
      r.source = TimeSource::running_mean;
    }
    date_record(ctx_, line, false, r, out);
    out.add_step(r);
    if (epoch_total_) out.series().total_steps = *epoch_total_ * *total;
    if (*n == *total && rest.find(" val_") != std::string_view::npos) {
      Marker m;
      m.kind = MarkerKind::eval;
      m.detail = std::string(t.substr(0, 120));
      out.add_marker(std::move(m));
    }
  }

 private:
  // "837ms/step", "3s/step", "85us/step" -> seconds; nullopt when the line has none ("ETA: 3:21").
  std::optional<double> per_step_seconds(std::string_view rest) {
    const auto at = rest.find("/step");
    if (at == std::string_view::npos) return std::nullopt;
    std::size_t b = at;
    double scale = 1;
    std::string_view unit = "s/step";
    if (b >= 2 && rest[b - 2] == 'm' && rest[b - 1] == 's') {
      scale = 1e-3;
      b -= 2;
      unit = "ms/step";
    } else if (b >= 2 && (rest[b - 2] == 'u' || rest[b - 2] == '\xb5') && rest[b - 1] == 's') {
      scale = 1e-6;
      b -= 2;
      unit = "us/step";
    } else if (b >= 1 && rest[b - 1] == 's') {
      b -= 1;
    } else {
      return std::nullopt;
    }
    std::size_t a = b;
    while (a > 0 && (is_digit(rest[a - 1]) || rest[a - 1] == '.')) --a;
    if (a == b) return std::nullopt;
    const auto v = parse_double(rest.substr(a, b - a));
    if (!v || *v < 0) return std::nullopt;
    if (units_.empty()) {
      units_ = unit;
    } else if (units_.find(unit) == std::string::npos) {
      units_ += ", ";
      units_ += unit;
    }
    return *v * scale;
  }

 public:
  void finish(SeriesBuilder& out) override { out.series().unit = units_; }

 private:
  ParseContext ctx_;
  std::optional<std::int64_t> epoch_;
  std::optional<std::int64_t> epoch_total_;
  std::int64_t epoch_steps_ = 0;
  std::int64_t offset_ = 0;
  std::string units_;
};

}  // namespace

std::unique_ptr<FormatParser> make_keras_parser(const ParseContext& ctx) {
  return std::make_unique<KerasParser>(ctx);
}

}  // namespace sparkops::trainlog
