// tqdm-based formats: bare tqdm, Hugging Face Trainer/TRL (bar + metric dicts), axolotl (bar +
// bracketed timestamps), torchtune ("1|45|Loss: ..." bar descriptions) and NeMo/Lightning
// ("Epoch 0: ... train_step_timing in s=0.98]"). A log holds several bars (checkpoint loading,
// evaluation, training); the training bar is the one with the most distinct steps, chosen at the
// end, so updates are kept per bar (bounded: every other update is dropped when a bar reaches the
// cap).
//   1|1|Loss: 1.849762201309204:   0%|          | 1/1367 [04:24<100:30:01, 264.86s/it]

#include <algorithm>
#include <limits>

#include "base/text.hpp"
#include "trainlog/format_parser.hpp"
#include "trainlog/log_text.hpp"
#include "trainlog/markers.hpp"
#include "trainlog/py_dict.hpp"
#include "trainlog/tqdm_scan.hpp"

namespace sparkops::trainlog {

namespace {

constexpr std::size_t kMaxBars = 32;
constexpr std::size_t kMaxPending = 100'000;

bool is_eval_desc(std::string_view desc) {
  return starts_with(desc, "Validation") || starts_with(desc, "Evaluat") ||
         starts_with(desc, "Testing") || starts_with(desc, "Predicting") ||
         starts_with(desc, "Sanity Checking");
}

class TqdmFamilyParser final : public FormatParser {
 public:
  TqdmFamilyParser(LogFormat format, const ParseContext& ctx) : format_(format), ctx_(ctx) {}

  void feed(const LogLine& line, SeriesBuilder& out) override {
    scan_tqdm(line.text, scratch_);
    std::size_t rest_begin = 0;
    bool had_update = false;
    for (const TqdmUpdate& u : scratch_) {
      rest_begin = u.end;
      if (is_eval_desc(u.desc)) {
        if (!in_eval_) add_pending(line.offset, MarkerKind::eval, std::nullopt, u.desc);
        in_eval_ = true;
        continue;
      }
      in_eval_ = false;
      had_update = true;
      const std::size_t bar = bar_index(u.total);
      last_bar_ = bar;
      last_elapsed_ = u.elapsed_seconds;
      if (bar == kNoBar || u.n <= 0) continue;
      record(bar, u, line);
    }
    const std::string_view rest = line.text.substr(rest_begin);
    if (std::size_t ts_end = 0; last_bar_ != kNoBar && !rest.empty()) {
      if (const auto ts = leading_timestamp(rest, &ts_end)) {
        if (anchors_.size() < kMaxPending)
          anchors_.push_back({last_bar_, last_elapsed_, line.offset, *ts});
        last_bar_ = kNoBar;
      } else if (!had_update) {
        last_bar_ = kNoBar;
      }
    }
    if (rest.empty()) return;
    if (const auto kind = detect_marker(rest)) add_pending(line.offset, *kind, std::nullopt, rest);
    if (rest.find('{') != std::string_view::npos && parse_py_dict(rest, dict_))
      handle_dict(line, out);
  }

  void finish(SeriesBuilder& out) override;

 private:
  static constexpr std::size_t kNoBar = std::numeric_limits<std::size_t>::max();

  struct Raw {
    std::int64_t step = 0;
    std::optional<double> seconds;
    double elapsed = 0;
    std::optional<SystemTime> stamped;
    std::uint64_t offset = 0;
  };
  struct Bar {
    std::optional<std::int64_t> total;
    std::vector<Raw> updates;
    std::uint64_t stride = 1;
    std::uint64_t ordinal = 0;
  };
  struct Pending {
    std::uint64_t offset = 0;
    Marker marker;
  };
  struct Anchor {
    std::size_t bar = 0;
    double elapsed = 0;
    std::uint64_t offset = 0;
    SystemTime time;
  };

  std::size_t bar_index(std::optional<std::int64_t> total) {
    for (std::size_t i = 0; i < bars_.size(); ++i) {
      if (bars_[i].total == total) return i;
    }
    if (bars_.size() >= kMaxBars) return kNoBar;
    bars_.push_back(Bar{total, {}, 1, 0});
    return bars_.size() - 1;
  }

  void record(std::size_t bar_i, const TqdmUpdate& u, const LogLine& line) {
    Bar& bar = bars_[bar_i];
    Raw r;
    r.step = u.n;
    r.seconds = u.seconds_per_it;
    if (format_ == LogFormat::lightning) {
      // "Epoch 2: 40%|...| 40/100 [...]": the bar restarts every epoch.
      if (starts_with(u.desc, "Epoch ") && u.total) {
        const auto epoch = integer_after(u.desc, "Epoch ");
        if (epoch && *epoch >= 0) r.step = *epoch * *u.total + u.n;
      }
      if (const auto t = number_after(u.postfix, "train_step_timing in s=")) r.seconds = *t;
    }
    r.elapsed = u.elapsed_seconds;
    r.stamped = line.stamped;
    r.offset = line.offset;
    if (!bar.updates.empty() && bar.updates.back().step == r.step) {
      if (!bar.updates.back().seconds) bar.updates.back().seconds = r.seconds;
      return;
    }
    ++bar.ordinal;
    if (bar.ordinal % bar.stride != 0) return;
    bar.updates.push_back(r);
    if (bar.updates.size() >= ctx_.max_steps) {
      std::size_t o = 0;
      for (std::size_t i = 1; i < bar.updates.size(); i += 2) bar.updates[o++] = bar.updates[i];
      bar.updates.resize(o);
      bar.stride *= 2;
    }
  }

  void add_pending(std::uint64_t offset, MarkerKind kind, std::optional<double> duration,
                   std::string_view detail) {
    if (pending_.size() >= kMaxPending) return;
    Marker m;
    m.kind = kind;
    m.duration_seconds = duration;
    m.detail = std::string(trim(detail.substr(0, 200)));
    pending_.push_back({offset, std::move(m)});
  }

  void handle_dict(const LogLine& line, SeriesBuilder& out) {
    if (const double* rt = dict_value(dict_, "train_runtime")) {
      out.series().train_runtime_seconds = *rt;
      return;
    }
    for (const auto& [k, v] : dict_) {
      if (starts_with(k, "eval_")) {
        const double* runtime = dict_value(dict_, "eval_runtime");
        add_pending(line.offset, MarkerKind::eval,
                    runtime ? std::optional<double>(*runtime) : std::nullopt, line.text);
        return;
      }
    }
  }

  LogFormat format_;
  ParseContext ctx_;
  std::vector<TqdmUpdate> scratch_;
  PyDictEntries dict_;
  std::vector<Bar> bars_;
  std::vector<Pending> pending_;
  std::vector<Anchor> anchors_;
  std::size_t last_bar_ = kNoBar;
  double last_elapsed_ = 0;
  bool in_eval_ = false;
};

void TqdmFamilyParser::finish(SeriesBuilder& out) {
  std::size_t main = kNoBar;
  for (std::size_t i = 0; i < bars_.size(); ++i) {
    if (main == kNoBar) {
      main = i;
      continue;
    }
    const Bar& a = bars_[i];
    const Bar& b = bars_[main];
    const auto count_a = a.updates.size() * a.stride;
    const auto count_b = b.updates.size() * b.stride;
    if (count_a > count_b || (count_a == count_b && a.total.value_or(0) > b.total.value_or(0)))
      main = i;
  }
  if (main == kNoBar) {
    for (auto& p : pending_) out.add_marker(std::move(p.marker));
    return;
  }
  const Bar& bar = bars_[main];
  if (bar.stride > 1)
    out.notes().downsample_stride = std::max(out.notes().downsample_stride, bar.stride);
  out.series().total_steps = bar.total;

  // Pass 1: the start time of each segment (a segment ends when the bar's elapsed goes back),
  // from the first log timestamp printed right after one of the segment's updates.
  std::vector<std::optional<SystemTime>> segment_start{std::nullopt};
  {
    std::size_t a = 0;
    double prev_elapsed = -1;
    for (const Raw& r : bar.updates) {
      while (a < anchors_.size() && anchors_[a].offset < r.offset) {
        if (anchors_[a].bar == main && !segment_start.back()) {
          segment_start.back() = add_seconds(anchors_[a].time, -anchors_[a].elapsed);
        }
        ++a;
      }
      if (r.elapsed + 1 < prev_elapsed) segment_start.emplace_back();
      prev_elapsed = r.elapsed;
    }
    for (; a < anchors_.size(); ++a) {
      if (anchors_[a].bar == main && !segment_start.back()) {
        segment_start.back() = add_seconds(anchors_[a].time, -anchors_[a].elapsed);
      }
    }
  }
  const bool anchored = std::any_of(segment_start.begin(), segment_start.end(),
                                    [](const auto& s) { return s.has_value(); });

  // Pass 2: replay updates and markers in log order.
  std::size_t m = 0;
  std::size_t segment = 0;
  const Raw* prev = nullptr;
  bool marker_since_prev = false;
  for (const Raw& r : bar.updates) {
    while (m < pending_.size() && pending_[m].offset <= r.offset) {
      out.add_marker(std::move(pending_[m].marker));
      marker_since_prev = true;
      ++m;
    }
    if (prev && r.elapsed + 1 < prev->elapsed) ++segment;
    if (prev && !marker_since_prev && prev->seconds && r.step > prev->step &&
        r.elapsed >= prev->elapsed) {
      const double expected = static_cast<double>(r.step - prev->step) * *prev->seconds;
      const double actual = r.elapsed - prev->elapsed;
      if (actual > 3 * expected && actual - expected > 10) {
        Marker s;
        s.kind = MarkerKind::stall;
        s.duration_seconds = actual - expected;
        s.detail = "elapsed time jumped with no step rate change";
        out.add_marker(std::move(s));
      }
    }
    StepRecord rec;
    rec.step = r.step;
    rec.seconds = r.seconds;
    rec.elapsed_seconds = r.elapsed;
    if (ctx_.sidecar && r.stamped) {
      rec.time = r.stamped;
    } else if (segment < segment_start.size() && segment_start[segment]) {
      rec.time = add_seconds(*segment_start[segment], r.elapsed);
    }
    out.add_step(rec);
    prev = &r;
    marker_since_prev = false;
  }
  for (; m < pending_.size(); ++m) out.add_marker(std::move(pending_[m].marker));
  if (ctx_.sidecar) {
    out.series().time_basis = TimeBasis::sidecar;
  } else if (anchored) {
    out.series().time_basis = TimeBasis::log_timestamps;
  }
}

}  // namespace

std::unique_ptr<FormatParser> make_tqdm_family_parser(LogFormat format, const ParseContext& ctx) {
  return std::make_unique<TqdmFamilyParser>(format, ctx);
}

}  // namespace sparkops::trainlog
