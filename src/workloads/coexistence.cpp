#include "workloads/coexistence.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "base/console.hpp"
#include "base/units.hpp"

namespace sparkops::workloads {

namespace {

bool on_gpu(const CoexistenceSpace& space) {
  return space.source == host::BudgetSource::gpu_memory;
}

}  // namespace

std::uint64_t held_in(const Workload& w, const CoexistenceSpace& space) {
  if (!on_gpu(space)) return w.actual_bytes;
  // A planned job (PID 0) is sized for this card; without the card's list, the GPU total.
  if (!space.card_bytes_by_pid || w.pid == 0) return w.gpu_bytes;
  std::uint64_t sum = 0;
  for (const auto& p : w.processes) {
    if (auto it = space.card_bytes_by_pid->find(p.pid); it != space.card_bytes_by_pid->end())
      sum += it->second;
  }
  return sum;
}

bool in_space(const Workload& w, const CoexistenceSpace& space) {
  return !on_gpu(space) || !space.card_bytes_by_pid || w.pid == 0 || w.gpu_bytes == 0 ||
         held_in(w, space) > 0;
}

std::uint64_t reserved_in(const Workload& w, const CoexistenceSpace& space) {
  if (!in_space(w, space)) return 0;
  return std::max(w.claim_bytes.value_or(0), held_in(w, space));
}

namespace {

StopAdvice advice_for(const Workload& w, const CoexistenceSpace& space) {
  std::string reason = w.heavy_reason;
  if (reason.empty()) {
    reason = w.claim_bytes
                 ? fmt::format("{}: claims {}", w.cap.text, format_bytes(reserved_in(w, space)))
                 : fmt::format("holds {}", format_bytes(held_in(w, space)));
  }
  return StopAdvice{w.pid, w.kind.label, std::move(reason), reserved_in(w, space)};
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

// "the pool (121.9 GiB total - 4.0 GiB overhead)", "GPU 0's memory (140.4 GiB)"
std::string space_words(const CoexistenceSpace& space) {
  if (on_gpu(space)) {
    return fmt::format("GPU {}'s memory ({})", space.gpu_index.value_or(0),
                       format_bytes(space.total_bytes));
  }
  return fmt::format("the pool ({} total - {} overhead)", format_bytes(space.total_bytes),
                     format_bytes(space.overhead_bytes));
}

}  // namespace

CoexistenceSpace pool_space(const host::PoolView& pool) {
  CoexistenceSpace s;
  s.source = host::BudgetSource::unified_pool;
  s.total_bytes = pool.total_bytes;
  s.overhead_bytes = pool.overhead_bytes;
  s.budget_now_bytes = pool.budget_bytes;
  return s;
}

CoexistenceSpace gpu_space(const host::DeviceMemory& device,
                           const std::vector<gpu::GpuSnapshot>& snapshots) {
  CoexistenceSpace s;
  s.source = host::BudgetSource::gpu_memory;
  s.total_bytes = device.total_bytes;
  s.budget_now_bytes = device.free_bytes;
  s.gpu_index = device.index;
  for (const auto& snap : snapshots) {
    if (snap.index != device.index || !snap.processes) continue;
    auto& by_pid = s.card_bytes_by_pid.emplace();
    for (const auto& p : *snap.processes) by_pid[p.pid] += p.used_bytes.value_or(0);
  }
  return s;
}

std::optional<CoexistenceSpace> coexistence_space(const std::optional<host::PoolView>& pool,
                                                  const std::optional<host::DeviceMemory>& device,
                                                  const std::vector<gpu::GpuSnapshot>& snapshots) {
  if (device) return gpu_space(*device, snapshots);
  if (pool) return pool_space(*pool);
  return std::nullopt;
}

ScanOptions scan_options_in(ScanOptions options, const CoexistenceSpace& space) {
  if (!on_gpu(space)) return options;
  options.sized_on_gpu = true;
  options.device_total_bytes = space.total_bytes;
  options.pool_bytes = sub_floor(space.total_bytes, space.overhead_bytes);
  return options;
}

int coexistence_exit_code(const CoexistenceVerdict& v, bool question) {
  int code = kExitOk;
  if (v.oversubscribed_bytes > 0) code = kExitFailure;
  if (!question) return code;
  switch (v.kind) {
    case VerdictKind::coexists:
      break;
    case VerdictKind::tight:
      code = std::max(code, kExitTight);
      break;
    case VerdictKind::stop_first:
    case VerdictKind::does_not_fit:
      code = kExitFailure;
      break;
  }
  return code;
}

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
                                       const CoexistenceSpace& space,
                                       const CoexistenceOptions& options) {
  CoexistenceVerdict v;
  v.need_bytes = need_bytes;
  v.source = space.source;
  v.gpu_index = space.gpu_index;
  const bool gpu = on_gpu(space);
  const std::uint64_t total_budget = sub_floor(space.total_bytes, space.overhead_bytes);
  // Workloads on other cards are not in this space (in_space).
  std::vector<const Workload*> by_size;
  for (const auto& w : scan.workloads) {
    if (!in_space(w, space)) continue;
    by_size.push_back(&w);
    v.reserved_bytes += reserved_in(w, space);
    if (w.heavy) ++v.heavy_count;
  }
  v.budget_now_bytes = space.budget_now_bytes;
  v.room_at_caps_bytes = sub_floor(total_budget, v.reserved_bytes);
  v.room_bytes = std::min(v.budget_now_bytes, v.room_at_caps_bytes);

  std::stable_sort(by_size.begin(), by_size.end(), [&space](const Workload* a, const Workload* b) {
    if (a->orphan != b->orphan) return a->orphan;  // orphans are garbage: stop them first
    return reserved_in(*a, space) > reserved_in(*b, space);
  });
  for (const auto* w : by_size) {
    if (w->orphan) v.orphans.push_back(advice_for(*w, space));
  }
  const std::string now_words =
      gpu ? fmt::format("free on GPU {} now {}", space.gpu_index.value_or(0),
                        format_bytes(v.budget_now_bytes))
          : fmt::format("available now {} after overhead", format_bytes(v.budget_now_bytes));
  const std::string numbers = fmt::format(
      "need {}, room {} ({}, {} once running workloads reach their caps)", format_bytes(need_bytes),
      format_bytes(v.room_bytes), now_words, format_bytes(v.room_at_caps_bytes));

  if (v.reserved_bytes > total_budget) {
    v.oversubscribed_bytes = v.reserved_bytes - total_budget;
    v.oversubscription = fmt::format(
        "oversubscribed: the workloads' caps and holdings claim {}, {} more than {}; as they grow "
        "they evict each other",
        format_bytes(v.reserved_bytes), format_bytes(v.oversubscribed_bytes), space_words(space));
  }

  if (need_bytes > total_budget) {
    v.kind = VerdictKind::does_not_fit;
    v.summary = fmt::format("does not fit: need {} exceeds {}", format_bytes(need_bytes),
                            space_words(space));
    return v;
  }

  for (const auto* w : by_size) {
    if (w->heavy) v.stop.push_back(advice_for(*w, space));
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
      v.stop.push_back(advice_for(*w, space));
      freed += reserved_in(*w, space);
      if (freed >= v.oversubscribed_bytes) break;
    }
    v.kind = VerdictKind::stop_first;
    v.summary = fmt::format(
        "oversubscribed by {} (claims {} > {}): stop or re-cap {} first",
        format_bytes(v.oversubscribed_bytes), format_bytes(v.reserved_bytes),
        gpu ? fmt::format("GPU {}'s {}", space.gpu_index.value_or(0), format_bytes(total_budget))
            : fmt::format("pool {} after overhead", format_bytes(total_budget)),
        stop_list(v.stop));
    return v;
  }

  if (need_bytes > v.room_bytes) {
    std::uint64_t room_now = v.budget_now_bytes;
    std::uint64_t room_caps = v.room_at_caps_bytes;
    for (const auto* w : by_size) {
      v.stop.push_back(advice_for(*w, space));
      room_now += held_in(*w, space);
      room_caps += reserved_in(*w, space);
      if (need_bytes <= std::min(room_now, room_caps)) break;
    }
    if (!v.stop.empty() && need_bytes <= std::min(room_now, room_caps)) {
      v.kind = VerdictKind::stop_first;
      v.summary = fmt::format("stop {} first; {}", stop_list(v.stop), numbers);
      return v;
    }
    v.stop.clear();
    v.kind = VerdictKind::does_not_fit;
    // A page-cache flush frees host memory: it helps only where the run lives in the pool.
    v.summary = fmt::format(
        "does not fit now, even with every workload stopped: {}; {}", numbers,
        gpu ? "shrink the run" : "free the page cache (sparkops flush) or shrink the run");
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

CoexistenceVerdict coexistence_verdict(const WorkloadScan& scan, std::uint64_t need_bytes,
                                       const host::PoolView& pool,
                                       const CoexistenceOptions& options) {
  return coexistence_verdict(scan, need_bytes, pool_space(pool), options);
}

}  // namespace sparkops::workloads
