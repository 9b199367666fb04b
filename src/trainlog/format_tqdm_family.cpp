// tqdm-based formats: bare tqdm, Hugging Face Trainer/TRL (bar + metric dicts), axolotl (bar +
// bracketed timestamps), torchtune ("1|45|Loss: ..." bar descriptions) and NeMo/Lightning
// ("Epoch 0: ... train_step_timing in s=0.98]"). A log holds several bars (checkpoint loading,
// dataset maps, evaluation, training). A bar is training only when its description is one a
// training loop draws (classify_bar); among those, the bar whose total is the Trainer banner's
// "Total optimization steps = N" wins, else the one that advanced to a new step most often (an
// evaluation bar nested in training restarts from 0 each time and never gets far). Updates are kept
// per bar (bounded: every other update is dropped when a bar reaches the cap) and the choice is
// made at the end.
//
// Seconds per step: tqdm's displayed rate is an exponential moving average (smoothing 0.3) of the
// recent updates, and lags whenever the log shows only some of them. The elapsed field is exact
// but printed in whole seconds, so the difference of two printed updates is used instead of the
// rate when that 1 s resolution is within 1 % of the interval (100 s or more); the rate otherwise.
// Lightning/NeMo's own "train_step_timing in s" is used whenever the postfix has it.
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
// tqdm prints elapsed in whole seconds; a difference is trusted when that is within 1 %.
constexpr double kElapsedResolution = 1.0;
constexpr double kMaxResolutionError = 0.01;
constexpr double kMinDeltaInterval = kElapsedResolution / kMaxResolutionError;

// torchtune's bar description "1|45|Loss: 1.84": the step (global_step) between the bars.
std::optional<std::int64_t> torchtune_step(std::string_view text) {
  const auto at = text.find("|Loss: ");
  if (at == std::string_view::npos || at == 0) return std::nullopt;
  std::size_t b = at;
  while (b > 0 && text[b - 1] >= '0' && text[b - 1] <= '9') --b;
  if (b == at || b < 2 || text[b - 1] != '|' || text[b - 2] < '0' || text[b - 2] > '9')
    return std::nullopt;
  return integer_after(text.substr(b, at - b), "");
}

// The training loss a bar prints: torchtune's description "1|45|Loss: 1.84", Lightning's postfix
// "loss=2.1" / "train_loss=2.1" (self.log(..., prog_bar=True)), NeMo's "reduced_train_loss=2.1".
std::optional<double> bar_loss(const TqdmUpdate& u) {
  if (u.desc.empty() && u.postfix.empty()) return std::nullopt;  // HF's bar: nothing to search
  if (const auto v = number_after(u.desc, "|Loss: ")) return v;
  static constexpr std::string_view kKeys[] = {"reduced_train_loss=", "train_loss=", "loss="};
  for (const std::string_view key : kKeys) {
    const auto at = u.postfix.find(key);
    if (at == std::string_view::npos) continue;
    if (key == "loss=" && at > 0 && u.postfix[at - 1] != ' ' && u.postfix[at - 1] != ',') continue;
    if (const auto v = number_after(u.postfix.substr(at), key)) return v;
  }
  return std::nullopt;
}

// ms-swift's string-valued dicts: "'global_step/max_steps': '5/60'".
std::optional<std::pair<std::int64_t, std::int64_t>> swift_global_step(std::string_view line) {
  const auto at = line.find("'global_step/max_steps': '");
  if (at == std::string_view::npos) return std::nullopt;
  const std::string_view v = line.substr(at + 26);
  const auto a = integer_after(v, "");
  const auto slash = v.find('/');
  if (!a || slash == std::string_view::npos || slash > 24) return std::nullopt;
  const auto b = integer_after(v.substr(slash + 1), "");
  if (!b) return std::nullopt;
  return std::make_pair(*a, *b);
}

class TqdmFamilyParser final : public FormatParser {
 public:
  TqdmFamilyParser(LogFormat format, const ParseContext& ctx) : format_(format), ctx_(ctx) {}

  void feed(const LogLine& line, SeriesBuilder& out) override {
    const bool redraw = read_redraw(line.text);
    if (!redraw) {
      if (!banner_total_) banner_total_ = trainer_banner_total(line.text);
      scan_tqdm(line.text, scratch_);
    }
    std::size_t rest_begin = 0;
    bool had_update = false;
    for (const TqdmUpdate& u : scratch_) {
      rest_begin = u.end;
      const BarRole role = redraw ? redraw_.role : classify_bar(u.desc);
      if (role == BarRole::eval) {
        if (!in_eval_) add_pending(line.offset, MarkerKind::eval, std::nullopt, u.desc);
        in_eval_ = true;
        continue;
      }
      if (role == BarRole::other) continue;  // start-up or data work, not steps
      in_eval_ = false;
      had_update = true;
      const std::size_t bar = bar_index(u.total);
      last_bar_ = bar;
      last_elapsed_ = u.elapsed_seconds;
      if (bar == kNoBar) continue;
      record(bar, u, line);
    }
    if (!redraw) remember_redraw_prefix(line.text);
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
    if (format_ == LogFormat::torchtune && !had_update) {
      // "1|5|Loss: 1.23" with the bar itself lost (a log that kept only the description).
      if (const auto step = torchtune_step(line.text); step && *step > 0) {
        add_fragment(*step, std::nullopt, line, TimeSource::none,
                     number_after(line.text, "|Loss: "));
      }
    }
    if (rest.empty()) return;
    if (const auto kind = detect_marker(rest)) add_pending(line.offset, *kind, std::nullopt, rest);
    if (rest.find('{') != std::string_view::npos && parse_py_dict(rest, dict_))
      handle_dict(rest, line, out);
  }

  void finish(SeriesBuilder& out) override;

 private:
  static constexpr std::size_t kNoBar = std::numeric_limits<std::size_t>::max();

  // tqdm redraws a bar after '\r' with only n, the times, the rate and the postfix changed: most
  // records of a tqdm log repeat the text before n of the last record that drew a bar. When that
  // record was exactly one update (nothing after its ']'), its text before n is kept, and a record
  // that starts with it has only what follows parsed (scan_tqdm_redraw says when that is all
  // scan_tqdm would find); the description and its role are the kept record's, as their text is
  // the same. Records that draw no bar (the metric dicts tqdm.write prints between redraws, other
  // log lines) keep the prefix: desc and role depend on the prefix's text alone. The Trainer
  // banner search looks only where the banner text could now be: not in the kept prefix
  // (searched when it was kept) and not across the boundary (the rest starts with n's digits,
  // which the banner text has none of), so in the rest.
  static constexpr std::string_view kBannerText = "Total optimization steps =";
  struct RedrawPrefix {
    bool valid = false;
    std::string text;  // the record's bytes before n (no '[')
    std::size_t desc_begin = 0, desc_size = 0;
    BarRole role = BarRole::candidate;
    bool has_banner_text = false;
  };

  bool read_redraw(std::string_view text) {
    if (!redraw_.valid || (!banner_total_ && redraw_.has_banner_text) ||
        !text.starts_with(redraw_.text))
      return false;
    scratch_.resize(1);
    TqdmUpdate& u = scratch_.front();
    if (!scan_tqdm_redraw(text, redraw_.text.size(), u)) return false;
    if (!banner_total_ && text.find(kBannerText, redraw_.text.size()) != std::string_view::npos)
      return false;
    u.desc = text.substr(redraw_.desc_begin, redraw_.desc_size);
    u.begin = 0;
    return true;
  }

  void remember_redraw_prefix(std::string_view text) {
    if (scratch_.empty()) return;  // no bar drawn: the kept prefix stays (see above)
    redraw_.valid = false;
    if (scratch_.size() != 1 || scratch_.front().end != text.size()) return;
    const TqdmUpdate& u = scratch_.front();
    const std::string_view prefix = text.substr(0, u.n_begin);
    if (prefix.find('[') != std::string_view::npos) return;
    redraw_.valid = true;
    redraw_.text.assign(prefix);
    redraw_.desc_begin = u.desc.empty() ? 0 : static_cast<std::size_t>(u.desc.data() - text.data());
    redraw_.desc_size = u.desc.size();
    redraw_.role = classify_bar(u.desc);
    redraw_.has_banner_text = prefix.find(kBannerText) != std::string_view::npos;
  }

  struct Raw {
    std::int64_t step = 0;
    std::optional<double> seconds;
    std::optional<double> loss;
    std::int64_t loss_step = 0;  // the step `loss` is for (torchtune's description names it)
    TimeSource source = TimeSource::none;
    double elapsed = 0;
    std::optional<SystemTime> stamped;
    std::uint64_t offset = 0;
  };
  struct Bar {
    std::optional<std::int64_t> total;
    std::vector<Raw> updates;
    std::uint64_t stride = 1;
    std::uint64_t ordinal = 0;
    std::uint64_t advances = 0;  // updates that reached a step beyond every earlier one
    std::int64_t max_n = -1;
    // The last printed position: the base of elapsed differences (0/N counts, repaints move it).
    std::optional<std::int64_t> base_n;
    double base_elapsed = 0;
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
    Bar b;
    b.total = total;
    bars_.push_back(std::move(b));
    return bars_.size() - 1;
  }

  void record(std::size_t bar_i, const TqdmUpdate& u, const LogLine& line) {
    Bar& bar = bars_[bar_i];
    std::int64_t step = u.n;
    std::optional<double> seconds = u.seconds_per_it;
    TimeSource source = seconds ? TimeSource::ema : TimeSource::none;
    if (seconds && unit_.empty()) unit_ = u.rate_inverted ? "it/s" : "s/it";
    if (format_ == LogFormat::lightning) {
      // Lightning's bar restarts every epoch ("Epoch 2: 40%|...| 40/100"); NeMo's counts global
      // steps and says so with "global_step=" in its postfix.
      const auto at = u.desc.find("Epoch ");
      if (at != std::string_view::npos && u.total &&
          u.postfix.find("global_step=") == std::string_view::npos) {
        const auto epoch = integer_after(u.desc.substr(at), "Epoch ");
        if (epoch && *epoch >= 0) step = *epoch * *u.total + u.n;
      }
      if (const auto t = number_after(u.postfix, "train_step_timing in s=")) {
        seconds = *t;
        source = TimeSource::printed;
        unit_ = "train_step_timing in s";
      }
    }
    // The exact mean since the last printed position, when its resolution allows (see the top).
    if (source != TimeSource::printed && bar.base_n && u.n > *bar.base_n &&
        u.elapsed_seconds - bar.base_elapsed >= kMinDeltaInterval) {
      seconds = (u.elapsed_seconds - bar.base_elapsed) / static_cast<double>(u.n - *bar.base_n);
      source = TimeSource::elapsed_delta;
    }
    if (!bar.base_n || u.n != *bar.base_n || u.elapsed_seconds > bar.base_elapsed) {
      bar.base_n = u.n;
      bar.base_elapsed = u.elapsed_seconds;
    }
    if (u.n <= 0) return;
    if (u.n > bar.max_n) {
      ++bar.advances;
      bar.max_n = u.n;
    } else if (u.n + 1 < bar.max_n && bar.updates.size() > 0 && u.n < bar.updates.back().step) {
      bar.max_n = u.n;  // the bar restarted (a new epoch's bar, a nested loop)
    }
    Raw r;
    r.step = step;
    r.seconds = seconds;
    r.loss = bar_loss(u);
    // torchtune updates the bar, then sets the description of the step just done: the render of
    // a new n still shows the previous step's "E|S|Loss"; S says which step the loss is for.
    const auto described = format_ == LogFormat::torchtune ? torchtune_step(u.desc) : std::nullopt;
    r.loss_step = described ? *described : step;
    r.source = seconds ? source : TimeSource::none;
    r.elapsed = u.elapsed_seconds;
    r.stamped = line.stamped;
    r.offset = line.offset;
    push_raw(bar, r);
  }

  void push_raw(Bar& bar, Raw r) {
    if (r.loss && !bar.updates.empty() && bar.updates.back().step == r.loss_step) {
      bar.updates.back().loss = r.loss;  // the later render of a step carries its current loss
    }
    if (r.loss_step != r.step) r.loss.reset();
    if (!bar.updates.empty() && bar.updates.back().step == r.step) {
      if (!bar.updates.back().seconds) {
        bar.updates.back().seconds = r.seconds;
        bar.updates.back().source = r.source;
      }
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

  // Steps that carry no bar (torchtune descriptions, ms-swift dicts, numbered loss dicts): used
  // only when no training bar is found.
  void add_fragment(std::int64_t step, std::optional<double> seconds, const LogLine& line,
                    TimeSource source = TimeSource::none, std::optional<double> loss = {}) {
    Raw r;
    r.step = step;
    r.seconds = seconds;
    r.loss = loss;
    r.loss_step = step;
    r.source = seconds ? source : TimeSource::none;
    r.stamped = line.stamped;
    r.offset = line.offset;
    push_raw(fragments_, r);
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

  void handle_dict(std::string_view text, const LogLine& line, SeriesBuilder& out) {
    if (const double* rt = dict_value(dict_, "train_runtime");
        rt && dict_value(dict_, "train_steps_per_second")) {
      out.series().train_runtime_seconds = *rt;  // the end-of-training summary
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
    const double* loss = dict_value(dict_, "loss");
    if (!loss) return;
    // HF's ProgressCallback writes the dict after the bar update of the step it logs: the loss
    // belongs to the last update before it (matched by offset when the steps are replayed).
    losses_.push_back({line.offset, *loss});
    if (losses_.size() >= 2 * ctx_.max_steps) {
      std::size_t o = 0;
      for (std::size_t i = 1; i < losses_.size(); i += 2) losses_[o++] = losses_[i];
      losses_.resize(o);
    }
    // A training log dict. ms-swift names its step ("global_step/max_steps": "5/60") and prints its
    // cumulative mean "train_speed(s/it)"; plain Trainer dicts carry no step: they are numbered in
    // order (the k-th loss dict), which stands in only when the log has no training bar.
    if (const auto gs = swift_global_step(text)) {
      if (!total_from_dicts_) total_from_dicts_ = gs->second;
      const double* speed = dict_value(dict_, "train_speed(s/it)");
      add_fragment(gs->first, speed ? std::optional<double>(*speed) : std::nullopt, line,
                   TimeSource::running_mean, *loss);
      return;
    }
    add_fragment(static_cast<std::int64_t>(++loss_dicts_), std::nullopt, line, TimeSource::none,
                 *loss);
    numbered_dicts_ = true;
  }

  LogFormat format_;
  ParseContext ctx_;
  std::vector<TqdmUpdate> scratch_;
  RedrawPrefix redraw_;
  PyDictEntries dict_;
  std::vector<Bar> bars_;
  std::vector<Pending> pending_;
  std::vector<Anchor> anchors_;
  std::size_t last_bar_ = kNoBar;
  double last_elapsed_ = 0;
  bool in_eval_ = false;
  std::optional<std::int64_t> banner_total_;
  std::optional<std::int64_t> total_from_dicts_;
  Bar fragments_;
  std::uint64_t loss_dicts_ = 0;
  struct Loss {
    std::uint64_t offset = 0;
    double value = 0;
  };
  std::vector<Loss> losses_;  // HF dict losses by line offset, in log order
  bool numbered_dicts_ = false;
  std::string unit_;
};

void TqdmFamilyParser::finish(SeriesBuilder& out) {
  std::size_t main = kNoBar;
  for (std::size_t i = 0; i < bars_.size(); ++i) {
    const Bar& a = bars_[i];
    if (a.updates.empty()) continue;
    if (main == kNoBar) {
      main = i;
      continue;
    }
    const Bar& b = bars_[main];
    if (prefer_training_bar({a.total, a.advances * a.stride}, {b.total, b.advances * b.stride},
                            banner_total_)) {
      main = i;
    }
  }
  bool from_fragments = false;
  if (main == kNoBar && !fragments_.updates.empty()) {
    from_fragments = true;
    // No training bar: the steps the dicts or bar descriptions name.
    bars_.push_back(fragments_);
    main = bars_.size() - 1;
    if (numbered_dicts_) {
      out.notes().inferred_steps = true;
    }
    if (total_from_dicts_) bars_[main].total = total_from_dicts_;
    for (auto& r : bars_[main].updates) r.elapsed = 0;
    if (!bars_[main].updates.empty() && bars_[main].updates.front().seconds) unit_ = "s/it";
  }
  if (main == kNoBar) {
    for (auto& p : pending_) out.add_marker(std::move(p.marker));
    return;
  }
  const Bar& bar = bars_[main];
  if (bar.stride > 1)
    out.notes().downsample_stride = std::max(out.notes().downsample_stride, bar.stride);
  out.series().total_steps = bar.total ? bar.total : banner_total_;
  // One record per update at most: grown by doubling, the step vector would reach up to twice
  // that (and copy itself on the way).
  out.series().steps.reserve(bar.updates.size());
  out.series().unit = unit_;

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
  std::size_t loss_i = 0;
  for (std::size_t i = 0; i < bar.updates.size(); ++i) {
    const Raw& r = bar.updates[i];
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
    rec.source = r.source;
    rec.loss = r.loss;
    // A dict loss printed after this update and before the next one's line. tqdm.write (which
    // ProgressCallback.on_log uses) redraws the bar after the dict, so a dict before the first
    // update seen belongs to that update (a log whose earlier renders were cut or throttled).
    const std::uint64_t next = i + 1 < bar.updates.size()
                                   ? bar.updates[i + 1].offset
                                   : std::numeric_limits<std::uint64_t>::max();
    std::optional<double> earlier;
    while (loss_i < losses_.size() && losses_[loss_i].offset < r.offset) {
      earlier = losses_[loss_i].value;
      ++loss_i;
    }
    if (!rec.loss && loss_i < losses_.size() && losses_[loss_i].offset < next) {
      rec.loss = losses_[loss_i].value;
    } else if (!rec.loss && i == 0) {
      rec.loss = earlier;
    }
    if (!from_fragments) rec.elapsed_seconds = r.elapsed;
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
