#include "workloads/coexistence.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "base/units.hpp"

namespace sparkops {

namespace {

StopAdvice advice_for(const Workload& w) {
  std::string reason = w.heavy_reason;
  if (reason.empty()) {
    reason = w.claim_bytes
                 ? fmt::format("{}: claims {}", w.cap.text, format_bytes(w.reserved_bytes()))
                 : fmt::format("holds {}", format_bytes(w.actual_bytes));
  }
  return StopAdvice{w.pid, w.kind.label, std::move(reason), w.reserved_bytes()};
}

std::string stop_list(const std::vector<StopAdvice>& stop) {
  std::vector<std::string> parts;
  parts.reserve(stop.size());
  for (const auto& s : stop) {
    // PID 0: a workload planned with `plan --beside`, not yet running.
    parts.push_back(s.pid == 0 ? fmt::format("the planned {} ({})", s.label, s.reason)
                               : fmt::format("{} ({}, {})", s.pid, s.label, s.reason));
  }
  return fmt::format("{}", fmt::join(parts, ", then "));
}

std::uint64_t sub_floor(std::uint64_t a, std::uint64_t b) {
  return a > b ? a - b : 0;
}

}  // namespace

std::string_view verdict_kind_name(VerdictKind k) {
  switch (k) {
    case VerdictKind::coexists:
      return "coexists";
    case VerdictKind::tight:
      return "tight";
    case VerdictKind::stop_first:
      return "stop_first";
    case VerdictKind::does_not_fit:
      return "does_not_fit";
  }
  return "coexists";
}

CoexistenceVerdict coexistence_verdict(const WorkloadScan& scan, std::uint64_t need_bytes,
                                       const PoolView& pool, const CoexistenceOptions& options) {
  CoexistenceVerdict v;
  v.need_bytes = need_bytes;
  const std::uint64_t total_budget = pool_total_budget(pool);
  for (const auto& w : scan.workloads) {
    v.reserved_bytes += w.reserved_bytes();
    if (w.heavy) ++v.heavy_count;
  }
  v.budget_now_bytes = pool.budget_bytes;
  v.room_at_caps_bytes = sub_floor(total_budget, v.reserved_bytes);
  v.room_bytes = std::min(v.budget_now_bytes, v.room_at_caps_bytes);

  std::vector<const Workload*> by_size;
  for (const auto& w : scan.workloads) by_size.push_back(&w);
  std::stable_sort(by_size.begin(), by_size.end(), [](const Workload* a, const Workload* b) {
    if (a->orphan != b->orphan) return a->orphan;  // orphans are garbage: stop them first
    return a->reserved_bytes() > b->reserved_bytes();
  });
  for (const auto* w : by_size) {
    if (w->orphan) v.orphans.push_back(advice_for(*w));
  }
  const std::string numbers = fmt::format(
      "need {}, room {} (available now {} after overhead, {} once running workloads reach their "
      "caps)",
      format_bytes(need_bytes), format_bytes(v.room_bytes), format_bytes(v.budget_now_bytes),
      format_bytes(v.room_at_caps_bytes));

  if (v.reserved_bytes > total_budget) {
    v.oversubscribed_bytes = v.reserved_bytes - total_budget;
    v.oversubscription = fmt::format(
        "oversubscribed: the workloads' caps and holdings claim {}, {} more than the pool ({} "
        "total - {} overhead); as they grow they evict each other",
        format_bytes(v.reserved_bytes), format_bytes(v.oversubscribed_bytes),
        format_bytes(pool.total_bytes), format_bytes(pool.overhead_bytes));
  }

  if (need_bytes > total_budget) {
    v.kind = VerdictKind::does_not_fit;
    v.summary = fmt::format("does not fit: need {} exceeds the pool ({} total - {} overhead)",
                            format_bytes(need_bytes), format_bytes(pool.total_bytes),
                            format_bytes(pool.overhead_bytes));
    return v;
  }

  for (const auto* w : by_size) {
    if (w->heavy) v.stop.push_back(advice_for(*w));
  }
  if (!v.stop.empty()) {
    v.kind = VerdictKind::stop_first;
    v.summary = need_bytes == 0
                    ? fmt::format("one heavy job at a time: stop {} before starting a run",
                                  stop_list(v.stop))
                    : fmt::format("stop {} first (one heavy job at a time); {}", stop_list(v.stop),
                                  numbers);
    return v;
  }

  // Without a question, oversubscription alone means something must stop (or be re-capped): the
  // largest claimers until the rest fit. With a need, the loop below frees room for it instead,
  // which also covers the claims (room at caps is 0 while oversubscribed).
  if (need_bytes == 0 && v.oversubscribed_bytes > 0) {
    std::uint64_t freed = 0;
    for (const auto* w : by_size) {
      v.stop.push_back(advice_for(*w));
      freed += w->reserved_bytes();
      if (freed >= v.oversubscribed_bytes) break;
    }
    v.kind = VerdictKind::stop_first;
    v.summary = fmt::format(
        "oversubscribed by {} (claims {} > pool {} after overhead): stop or re-cap {} first",
        format_bytes(v.oversubscribed_bytes), format_bytes(v.reserved_bytes),
        format_bytes(total_budget), stop_list(v.stop));
    return v;
  }

  if (need_bytes > v.room_bytes) {
    std::uint64_t room_now = v.budget_now_bytes;
    std::uint64_t room_caps = v.room_at_caps_bytes;
    for (const auto* w : by_size) {
      v.stop.push_back(advice_for(*w));
      room_now += w->actual_bytes;
      room_caps += w->reserved_bytes();
      if (need_bytes <= std::min(room_now, room_caps)) break;
    }
    if (!v.stop.empty() && need_bytes <= std::min(room_now, room_caps)) {
      v.kind = VerdictKind::stop_first;
      v.summary = fmt::format("stop {} first; {}", stop_list(v.stop), numbers);
      return v;
    }
    v.stop.clear();
    v.kind = VerdictKind::does_not_fit;
    v.summary = fmt::format(
        "does not fit now, even with every workload stopped: {}; free the page cache "
        "(sparkops flush) or shrink the run",
        numbers);
    return v;
  }

  const std::uint64_t spare = v.room_bytes - need_bytes;
  if (need_bytes > 0 && spare < options.tight_margin_bytes) {
    v.kind = VerdictKind::tight;
    v.summary = fmt::format("tight: {}, leaving {} (less than the {} margin)", numbers,
                            format_bytes(spare), format_bytes(options.tight_margin_bytes));
    return v;
  }
  v.kind = VerdictKind::coexists;
  v.summary = need_bytes == 0
                  ? fmt::format("no heavy workload running; room for a new run: {}",
                                format_bytes(v.room_bytes))
                  : fmt::format("coexists: {}, leaving {}", numbers, format_bytes(spare));
  return v;
}

}  // namespace sparkops
