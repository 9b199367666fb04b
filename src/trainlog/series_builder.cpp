#include "trainlog/series_builder.hpp"

#include <utility>

namespace sparkops::trainlog {

SeriesBuilder::SeriesBuilder(std::size_t max_steps, std::size_t max_markers)
    : max_steps_(max_steps < 2 ? 2 : max_steps), max_markers_(max_markers) {}

namespace {

template <class T>
void fill(std::optional<T>& into, const std::optional<T>& from) {
  if (!into && from) into = from;
}

}  // namespace

void SeriesBuilder::add_step(StepRecord record) {
  if (record.time) {
    if (last_time_ && *record.time < *last_time_) {
      ++series_.notes.backwards_times;
      record.time.reset();
    } else {
      last_time_ = record.time;
    }
  }
  if (last_step_ && record.step == *last_step_ && stride_ == 1 && !series_.steps.empty()) {
    StepRecord& prev = series_.steps.back();
    fill(prev.seconds, record.seconds);
    fill(prev.time, record.time);
    fill(prev.elapsed_seconds, record.elapsed_seconds);
    return;
  }
  if (last_step_ && record.step == *last_step_) return;  // a redraw while downsampling
  bool fresh_run = false;
  if (last_step_ && record.step < *last_step_) {
    // Back to (or below) where this run began: a new launch from scratch, kept as its own run.
    // Anywhere else: a resume from a checkpoint inside the same run.
    fresh_run = run_first_step_ && record.step <= *run_first_step_;
    Marker m;
    m.kind = MarkerKind::restart;
    m.step = last_step_;
    m.time = record.time;
    m.detail =
        (fresh_run ? "a new run: step counter went back to " : "step counter went back to ") +
        std::to_string(record.step);
    add_marker(std::move(m));
  }
  if (!run_first_step_ || fresh_run) {
    run_first_step_ = record.step;
    flush_group();
    series_.run_starts.push_back(series_.steps.size());
  }
  last_step_ = record.step;
  ++steps_added_;
  push(record);
}

void SeriesBuilder::push(const StepRecord& record) {
  if (stride_ == 1) {
    series_.steps.push_back(record);
    if (series_.steps.size() >= max_steps_) compact();
    return;
  }
  ++group_count_;
  if (record.seconds) {
    group_seconds_sum_ += *record.seconds;
    ++group_seconds_count_;
  }
  group_last_ = record;
  if (group_count_ >= stride_) flush_group();
}

void SeriesBuilder::flush_group() {
  if (group_count_ == 0) return;
  StepRecord r = group_last_;
  r.seconds =
      group_seconds_count_
          ? std::optional<double>(group_seconds_sum_ / static_cast<double>(group_seconds_count_))
          : std::nullopt;
  group_count_ = 0;
  group_seconds_sum_ = 0;
  group_seconds_count_ = 0;
  series_.steps.push_back(r);
  if (series_.steps.size() >= max_steps_) compact();
}

// Halves the record count by merging neighbours: the later record's step and time, the mean of the
// two step times. The stride doubles so later records are merged the same way.
void SeriesBuilder::compact() {
  auto& v = series_.steps;
  std::size_t out = 0;
  for (std::size_t i = 0; i + 1 < v.size(); i += 2) {
    StepRecord merged = v[i + 1];
    if (v[i].seconds && v[i + 1].seconds) {
      merged.seconds = (*v[i].seconds + *v[i + 1].seconds) / 2.0;
    } else if (!merged.seconds) {
      merged.seconds = v[i].seconds;
    }
    v[out++] = merged;
  }
  if (v.size() % 2 == 1) v[out++] = v.back();
  v.resize(out);
  // Run starts follow their records (approximately: a merged pair may straddle a boundary).
  for (auto& start : series_.run_starts) start /= 2;
  stride_ *= 2;
  series_.notes.downsample_stride = stride_;
}

void SeriesBuilder::add_marker(Marker marker) {
  if (series_.markers.size() >= max_markers_) {
    ++series_.notes.dropped_markers;
    return;
  }
  if (!marker.step) marker.step = last_step_;
  marker.steps_before = steps_added_;
  // One save or evaluation is often announced by several lines (DeepSpeed prints five per save).
  if (!series_.markers.empty()) {
    const Marker& prev = series_.markers.back();
    if (prev.kind == marker.kind && prev.step == marker.step) return;
  }
  if (!marker.time && !series_.steps.empty() && marker.step == last_step_) {
    marker.time = series_.steps.back().time;
  }
  if (marker.detail.size() > 120) marker.detail.resize(120);
  // Excerpts end up in JSON and HTML: keep printable ASCII only (a cut may split a UTF-8 sequence).
  for (char& c : marker.detail) {
    if (c < 0x20 || c > 0x7e) c = '?';
  }
  series_.markers.push_back(std::move(marker));
}

StepSeries SeriesBuilder::take() {
  flush_group();
  return std::move(series_);
}

}  // namespace sparkops::trainlog
