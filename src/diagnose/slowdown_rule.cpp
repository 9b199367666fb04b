#include "diagnose/slowdown_rule.hpp"

#include <algorithm>
#include <cmath>

namespace sparkops::diagnose {

namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

// The scale factor that makes the median absolute deviation estimate a normal distribution's
// standard deviation (1 / Phi^-1(3/4)).
constexpr double kMadToSigma = 1.4826;
// A pause's step-time tail is skipped for at most this many measurements.
constexpr std::size_t kMaxRecoveryTail = 20;

}  // namespace

SlowdownRule::SlowdownRule(SlowdownRuleOptions options) : o_(options) {
  if (o_.thresholds.sustain_steps < 1) o_.thresholds.sustain_steps = 1;
  if (o_.baseline_samples < 1) o_.baseline_samples = 1;
  if (o_.thresholds.warmup_steps < 0) o_.thresholds.warmup_steps = 0;
}

bool SlowdownRule::settle_baseline(std::vector<RuleEvent>& out) {
  if (baseline_) return true;
  if (calm_.empty()) return false;
  baseline_count_ = calm_.size();
  std::vector<double> v;
  v.reserve(calm_.size());
  for (const Measurement& m : calm_) v.push_back(m.seconds);
  baseline_ = median_of(v);
  for (double& x : v) x = std::fabs(x - *baseline_);
  const double sigma = kMadToSigma * median_of(v);
  threshold_ = std::max(o_.thresholds.slowdown_factor * *baseline_,
                        *baseline_ + o_.thresholds.noise_sigmas * sigma);
  std::vector<Measurement> window = std::move(calm_);
  calm_.clear();
  for (const Measurement& m : window) judge(m, out);
  return true;
}

void SlowdownRule::feed(const Measurement& m, std::vector<RuleEvent>& out) {
  if (!(m.seconds > 0) || !std::isfinite(m.seconds)) return;
  if (m.paused) {
    recovering_ = kMaxRecoveryTail;
    return;
  }
  ++seen_;
  if (seen_ <= o_.thresholds.warmup_steps) {
    ++warmup_skipped_;
    return;
  }
  if (!baseline_) {
    calm_.push_back(m);
    if (calm_.size() >= o_.baseline_samples) settle_baseline(out);
    return;
  }
  judge(m, out);
}

void SlowdownRule::judge(const Measurement& m, std::vector<RuleEvent>& out) {
  const double steps = static_cast<double>(std::max<std::int64_t>(1, m.steps));
  const double wall = m.seconds * steps;
  const bool slow = m.seconds >= *threshold_;
  if (recovering_ > 0) {
    if (slow) {
      --recovering_;
      return;
    }
    recovering_ = 0;
  }
  if (slow) {
    if (!slow_.empty()) span_wall_ += gap_wall_;
    slow_.push_back(Slow{m.index, m.step, m.seconds, m.steps, m.time});
    slow_wall_ += wall;
    span_wall_ += wall;
    gap_wall_ = 0;
    gap_ = 0;
    if (!confirmed_ && static_cast<std::int64_t>(slow_.size()) >= o_.thresholds.sustain_steps &&
        slow_wall_ >= o_.thresholds.min_wall_share * span_wall_) {
      confirmed_ = true;
      out.push_back(event(RuleEventKind::slowdown_start));
    }
    return;
  }
  if (slow_.empty()) return;
  ++gap_;
  gap_wall_ += wall;
  const std::int64_t limit = confirmed_ ? o_.thresholds.sustain_steps : 2;
  if (gap_ >= limit) close(out);
}

void SlowdownRule::finish(std::vector<RuleEvent>& out) {
  if (!slow_.empty()) close(out);
}

RuleEvent SlowdownRule::event(RuleEventKind kind) const {
  RuleEvent e;
  e.kind = kind;
  e.first_index = slow_.front().index;
  e.last_index = slow_.back().index;
  e.first_step = slow_.front().step;
  e.last_step = slow_.back().step;
  e.first_time = slow_.front().time;
  e.last_time = slow_.back().time;
  e.slow_measurements = slow_.size();
  std::vector<double> v;
  v.reserve(slow_.size());
  double excess = 0;
  for (const Slow& s : slow_) {
    v.push_back(s.seconds);
    excess += (s.seconds - *baseline_) * static_cast<double>(std::max<std::int64_t>(1, s.steps));
  }
  e.median_seconds = median_of(v);
  e.baseline_seconds = *baseline_;
  e.ratio = e.median_seconds / *baseline_;
  e.wall_share = span_wall_ > 0 ? slow_wall_ / span_wall_ : 1.0;
  e.excess_seconds = excess;
  return e;
}

void SlowdownRule::close(std::vector<RuleEvent>& out) {
  if (confirmed_) {
    out.push_back(event(RuleEventKind::slowdown_end));
  } else if (static_cast<std::int64_t>(slow_.size()) < o_.thresholds.sustain_steps) {
    out.push_back(event(RuleEventKind::stall));
  }
  // Otherwise: enough slow measurements but too little of the time: a flickering pace, neither.
  slow_.clear();
  slow_wall_ = span_wall_ = gap_wall_ = 0;
  gap_ = 0;
  confirmed_ = false;
}

}  // namespace sparkops::diagnose
