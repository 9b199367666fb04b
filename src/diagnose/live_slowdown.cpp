#include "diagnose/live_slowdown.hpp"

#include <algorithm>

namespace sparkops::diagnose {

namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

}  // namespace

LiveSlowdownDetector::LiveSlowdownDetector(LiveSlowdownOptions options) : options_(options) {
  if (options_.sustain_steps < 1) options_.sustain_steps = 1;
  if (options_.baseline_samples < 1) options_.baseline_samples = 1;
}

std::optional<LiveSlowdownEvent> LiveSlowdownDetector::feed(std::int64_t step, double seconds,
                                                            std::optional<SystemTime> time) {
  if (!(seconds > 0)) return std::nullopt;
  last_ = seconds;
  ++measured_;
  if (measured_ <= options_.warmup_steps) return std::nullopt;
  if (!baseline_) {
    calm_.push_back(seconds);
    if (calm_.size() >= options_.baseline_samples) {
      baseline_ = median_of(calm_);
      calm_.clear();
    }
    return std::nullopt;
  }
  const bool above = seconds >= options_.slowdown_factor * *baseline_;
  if (above == slow_) {
    streak_.clear();
    return std::nullopt;
  }
  streak_.push_back(Point{step, seconds, time});
  if (static_cast<std::int64_t>(streak_.size()) < options_.sustain_steps) return std::nullopt;
  std::vector<double> values;
  for (const auto& p : streak_) values.push_back(p.seconds);
  LiveSlowdownEvent e;
  e.edge = above ? SlowdownEdge::start : SlowdownEdge::end;
  e.step = step;
  e.first_step = streak_.front().step;
  e.time = streak_.front().time;
  e.seconds = median_of(values);
  e.baseline_seconds = *baseline_;
  e.ratio = e.seconds / *baseline_;
  slow_ = above;
  if (above) ++count_;
  streak_.clear();
  return e;
}

}  // namespace sparkops::diagnose
