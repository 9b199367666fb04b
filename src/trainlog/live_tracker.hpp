#pragma once
// LiveTracker: the training-log parse of `analyze`, fed one record at a time as a job prints it
// (`sparkops watch`). Detection votes over the first records (kept, bounded, and replayed into the
// format's parser once the format is known); each record carries its arrival time, as the `.times`
// sidecar would give it. Steps are reported as they appear: tqdm-family bars are read directly
// (their parser only settles which bar is the training bar at the end), the other formats from the
// series their parser builds. finish() returns the series `analyze` would build from the log and
// its sidecar. Not thread-safe.

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.hpp"
#include "trainlog/detect.hpp"
#include "trainlog/series_builder.hpp"
#include "trainlog/step_series.hpp"

namespace sparkops::trainlog {

class FormatParser;

struct LiveStep {
  std::int64_t step = 0;
  std::optional<double> seconds;  // seconds per step as the log states it (or derives)
  SystemTime time{};              // arrival time of the record that reported it
};

struct LiveTrackerOptions {
  std::size_t max_steps = 1'000'000;
  std::uint64_t live_evidence = 20;           // decide once this many step lines agree (a live view
                                              // cannot wait for analyze's 200)...
  std::uint64_t detect_bytes = 4 << 20;       // ...or once a format was seen and this much was read
  std::uint64_t max_detect_bytes = 64 << 20;  // give up when nothing was recognised by then
  std::size_t max_record_bytes = 1 << 20;     // longer records are cut (as RecordReader does)
};

class LiveTracker {
 public:
  explicit LiveTracker(LiveTrackerOptions options = {});
  ~LiveTracker();
  LiveTracker(const LiveTracker&) = delete;
  LiveTracker& operator=(const LiveTracker&) = delete;

  // One record (no terminator) that starts at byte `offset` of the log and arrived at `arrival`.
  // Appends the steps it completed to `out`.
  void feed(std::string_view record, std::uint64_t offset, SystemTime arrival,
            std::vector<LiveStep>& out);

  std::optional<LogFormat> format() const { return format_; }
  // True when detection gave up (no known format in the first max_detect_bytes).
  bool gave_up() const { return gave_up_; }

  // Ends the parse. nullopt when no format was recognised (or finish was already called).
  std::optional<StepSeries> finish();

 private:
  struct Held {
    std::string text;
    std::uint64_t offset = 0;
    SystemTime arrival{};
  };
  void start_parser(LogFormat format, std::vector<LiveStep>& out);
  void parse(std::string_view record, std::uint64_t offset, SystemTime arrival,
             std::vector<LiveStep>& out);
  void live_tqdm(std::string_view record, SystemTime arrival, std::vector<LiveStep>& out);

  LiveTrackerOptions options_;
  FormatDetector detector_;
  std::vector<Held> held_;
  std::size_t held_bytes_ = 0;
  std::uint64_t seen_bytes_ = 0;
  std::uint64_t lines_ = 0;
  std::uint64_t binary_lines_ = 0;
  std::optional<LogFormat> format_;
  bool gave_up_ = false;
  bool finished_ = false;
  std::unique_ptr<SeriesBuilder> builder_;
  std::unique_ptr<FormatParser> parser_;
  std::size_t emitted_ = 0;  // builder steps already reported (non-tqdm formats)
  // tqdm family: per candidate bar (classify_bar), its total, the last step reported, the highest
  // step since it last restarted and how often it reached a new one (prefer_training_bar).
  struct BarTrack {
    std::optional<std::int64_t> total;
    std::int64_t last_step = 0;
    std::int64_t max_n = -1;
    std::uint64_t advances = 0;
  };
  std::map<std::int64_t, BarTrack> bars_;     // key: total (-1 when the bar has none)
  std::optional<std::int64_t> banner_total_;  // "Total optimization steps = N"
  std::vector<TqdmUpdate> scratch_;
};

}  // namespace sparkops::trainlog
