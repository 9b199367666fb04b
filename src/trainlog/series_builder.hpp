#pragma once
// SeriesBuilder: the one place that appends to a StepSeries, so every parser gets the same rules:
// a repeated step merges into the record before it (tqdm redraws, duplicated log lines), a step
// lower than the previous one is a restart, a time earlier than the previous one is dropped and
// counted, and memory stays bounded (past `max_steps` records, neighbours are merged and the stride
// doubles).

#include <cstddef>
#include <cstdint>
#include <optional>

#include "trainlog/step_series.hpp"

namespace sparkops::trainlog {

class SeriesBuilder {
 public:
  explicit SeriesBuilder(std::size_t max_steps = 1'000'000, std::size_t max_markers = 100'000);

  void add_step(StepRecord record);
  // `marker.step` defaults to the last step added; `marker.time` to that step's time.
  void add_marker(Marker marker);

  std::optional<std::int64_t> last_step() const { return last_step_; }
  std::optional<SystemTime> last_time() const { return last_time_; }
  StepSeries& series() { return series_; }
  ParseNotes& notes() { return series_.notes; }

  // Flushes any partly merged group and hands the series over.
  StepSeries take();

 private:
  void push(const StepRecord& record);
  void compact();
  void flush_group();

  StepSeries series_;
  std::size_t max_steps_;
  std::size_t max_markers_;
  std::optional<std::int64_t> last_step_;
  std::optional<std::int64_t> run_first_step_;
  std::uint64_t steps_added_ = 0;  // the first step of the current run
  std::optional<SystemTime> last_time_;
  // Downsampling state: records are merged `stride` at a time once the cap was hit.
  std::uint64_t stride_ = 1;
  std::uint64_t group_count_ = 0;
  double group_seconds_sum_ = 0;
  std::uint64_t group_seconds_count_ = 0;
  StepRecord group_last_;
};

}  // namespace sparkops::trainlog
