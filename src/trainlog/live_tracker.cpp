#include "trainlog/live_tracker.hpp"

#include <cstring>

#include "base/text.hpp"
#include "trainlog/format_parser.hpp"
#include "trainlog/tqdm_scan.hpp"

namespace sparkops::trainlog {

namespace {

constexpr std::size_t kMaxHeldBytes = 4 << 20;

bool is_tqdm_family(LogFormat f) {
  return f == LogFormat::tqdm || f == LogFormat::hf_trainer || f == LogFormat::axolotl ||
         f == LogFormat::lightning || f == LogFormat::torchtune;
}

}  // namespace

LiveTracker::LiveTracker(LiveTrackerOptions options) : options_(options) {}
LiveTracker::~LiveTracker() = default;

void LiveTracker::feed(std::string_view record, std::uint64_t offset, SystemTime arrival,
                       std::vector<LiveStep>& out) {
  if (finished_ || gave_up_) return;
  if (record.size() > options_.max_record_bytes)
    record = record.substr(0, options_.max_record_bytes);
  if (record.empty()) return;
  ++lines_;
  if (std::memchr(record.data(), '\0', record.size()) != nullptr) {
    ++binary_lines_;
    return;
  }
  if (parser_) {
    parse(record, offset, arrival, out);
    return;
  }
  seen_bytes_ += record.size() + 1;
  detector_.feed(record);
  if (held_bytes_ + record.size() <= kMaxHeldBytes) {
    held_.push_back(Held{std::string(record), offset, arrival});
    held_bytes_ += record.size();
  }
  const Detection d = detector_.result();
  if (d.format && (detector_.confident() || d.evidence >= options_.live_evidence ||
                   seen_bytes_ >= options_.detect_bytes)) {
    start_parser(*d.format, out);
  } else if (seen_bytes_ >= options_.max_detect_bytes) {
    gave_up_ = true;
    held_.clear();
    held_.shrink_to_fit();
  }
}

void LiveTracker::start_parser(LogFormat format, std::vector<LiveStep>& out) {
  format_ = format;
  if (format == LogFormat::trainer_state) {  // a whole JSON document, never a stream
    gave_up_ = true;
    return;
  }
  ParseContext ctx;
  ctx.sidecar = true;
  ctx.max_steps = options_.max_steps;
  builder_ = std::make_unique<SeriesBuilder>(options_.max_steps);
  builder_->series().format = format;
  const Detection d = detector_.result();
  builder_->notes().other_format = d.other;
  builder_->notes().other_format_lines = d.other_evidence;
  parser_ = make_parser(format, ctx);
  std::vector<Held> held = std::move(held_);
  held_.clear();
  for (const Held& h : held) parse(h.text, h.offset, h.arrival, out);
}

void LiveTracker::parse(std::string_view record, std::uint64_t offset, SystemTime arrival,
                        std::vector<LiveStep>& out) {
  LogLine line;
  line.text = record;
  line.offset = offset;
  line.stamped = arrival;
  parser_->feed(line, *builder_);
  if (is_tqdm_family(*format_)) {
    live_tqdm(record, arrival, out);
    return;
  }
  auto& steps = builder_->series().steps;
  if (steps.size() < emitted_) emitted_ = steps.size();  // the builder merged neighbours (cap)
  for (; emitted_ < steps.size(); ++emitted_) {
    const StepRecord& r = steps[emitted_];
    out.push_back(LiveStep{r.step, r.seconds, r.time.value_or(arrival)});
  }
}

void LiveTracker::live_tqdm(std::string_view record, SystemTime arrival,
                            std::vector<LiveStep>& out) {
  if (!banner_total_) banner_total_ = trainer_banner_total(record);
  scan_tqdm(record, scratch_);
  for (const TqdmUpdate& u : scratch_) {
    // The same classification as analyze (tqdm_scan.hpp classify_bar): start-up and data bars
    // ("Loading weights", "Map", "Tokenizing") and evaluation bars are never live steps.
    if (classify_bar(u.desc) != BarRole::candidate || u.n <= 0) continue;
    const std::optional<std::int64_t> total = u.total;
    BarTrack& bar = bars_[total.value_or(-1)];
    bar.total = total;
    const bool restarted = u.n + 1 < bar.last_step;  // a new epoch's bar, a nested loop
    const bool advanced = u.n > bar.last_step || restarted;
    if (u.n > bar.max_n) {
      ++bar.advances;
      bar.max_n = u.n;
    } else if (restarted) {
      bar.max_n = u.n;
    }
    if (!advanced) continue;
    bar.last_step = u.n;
    // The training bar so far, by analyze's chooser (tqdm_scan.hpp prefer_training_bar).
    bool main = true;
    for (const auto& [key, other] : bars_) {
      if (&other != &bar && prefer_training_bar({other.total, other.advances},
                                                {bar.total, bar.advances}, banner_total_)) {
        main = false;
      }
    }
    if (main) out.push_back(LiveStep{u.n, u.seconds_per_it, arrival});
  }
}

std::optional<StepSeries> LiveTracker::finish() {
  if (finished_) return std::nullopt;
  finished_ = true;
  if (!parser_ && !gave_up_) {
    // A short log: decide on what was seen.
    const Detection d = detector_.result();
    std::vector<LiveStep> ignored;
    if (d.format) start_parser(*d.format, ignored);
  }
  if (!parser_) return std::nullopt;
  parser_->finish(*builder_);
  StepSeries series = builder_->take();
  series.notes.lines = lines_;
  series.notes.binary_lines = binary_lines_;
  anchor_elapsed(series, ParseContext{});
  return series;
}

}  // namespace sparkops::trainlog
