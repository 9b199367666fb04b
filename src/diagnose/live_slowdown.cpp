#include "diagnose/live_slowdown.hpp"

namespace sparkops::diagnose {

namespace {

SlowdownRuleOptions rule_options(const LiveSlowdownOptions& o) {
  return SlowdownRuleOptions{o.slowdown, o.baseline_samples};
}

}  // namespace

LiveSlowdownDetector::LiveSlowdownDetector(LiveSlowdownOptions options)
    : rule_(rule_options(options)) {}

std::optional<LiveSlowdownEvent> LiveSlowdownDetector::feed(std::int64_t step, double seconds,
                                                            std::optional<SystemTime> time) {
  if (!(seconds > 0)) return std::nullopt;
  last_ = seconds;
  Measurement m;
  m.index = index_++;
  m.step = step;
  m.seconds = seconds;
  m.steps = last_step_ && step > *last_step_ ? step - *last_step_ : 1;
  m.time = time;
  last_step_ = step;
  events_.clear();
  rule_.feed(m, events_);
  if (events_.empty()) return std::nullopt;
  const RuleEvent& r = events_.back();
  LiveSlowdownEvent e;
  e.edge = r.kind == RuleEventKind::slowdown_start ? SlowdownEdge::start
           : r.kind == RuleEventKind::slowdown_end ? SlowdownEdge::end
                                                   : SlowdownEdge::stall;
  e.step = step;
  e.first_step = r.first_step;
  e.time = r.first_time;
  e.seconds = r.median_seconds;
  e.baseline_seconds = r.baseline_seconds;
  e.ratio = r.ratio;
  e.stall_seconds = r.excess_seconds;
  if (e.edge == SlowdownEdge::start) ++count_;
  if (e.edge == SlowdownEdge::stall) ++stalls_;
  return e;
}

}  // namespace sparkops::diagnose
