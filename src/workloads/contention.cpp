#include "workloads/contention.hpp"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "base/text.hpp"
#include "base/units.hpp"

namespace sparkops::workloads {

namespace {

// Counter rate per second; absent across a reset or without both values.
std::optional<double> rate(const std::optional<std::uint64_t>& before,
                           const std::optional<std::uint64_t>& now, double seconds) {
  if (!before || !now || *now < *before || seconds <= 0) return std::nullopt;
  return static_cast<double>(*now - *before) / seconds;
}

std::optional<std::uint32_t> parse_pid_prefix(std::string_view s) {
  std::size_t n = 0;
  while (n < s.size() && s[n] >= '0' && s[n] <= '9') ++n;
  const auto v = parse_u64(s.substr(0, n));
  if (!v || *v > 0xffffffffULL) return std::nullopt;
  return static_cast<std::uint32_t>(*v);
}

}  // namespace

std::string_view contention_kind_name(ContentionKind k) {
  switch (k) {
    case ContentionKind::psi_some:
      return "psi_some";
    case ContentionKind::psi_full:
      return "psi_full";
    case ContentionKind::major_faults:
      return "major_faults";
    case ContentionKind::refaults:
      return "refaults";
    case ContentionKind::swap_in:
      return "swap_in";
    case ContentionKind::evicted:
      return "evicted";
    case ContentionKind::vanished:
      return "vanished";
    case ContentionKind::oom_kill:
      return "oom_kill";
  }
  return "unknown";
}

bool is_oom_line(std::string_view line) {
  return contains(line, "Out of memory: Killed process") ||
         contains(line, "oom-kill:constraint=") || contains(line, "Memory cgroup out of memory") ||
         contains(line, "invoked oom-killer");
}

std::optional<OomVictim> parse_oom_victim(std::string_view line) {
  // "Out of memory: Killed process 4242 (python3) total-vm:..., anon-rss:..."
  // "Memory cgroup out of memory: Killed process 4242 (python3) ..."
  constexpr std::string_view killed = "Killed process ";
  if (const auto at = line.find(killed); at != std::string_view::npos) {
    std::string_view rest = line.substr(at + killed.size());
    const auto pid = parse_pid_prefix(rest);
    if (!pid) return std::nullopt;
    OomVictim v{*pid, {}};
    const auto open = rest.find('(');
    const auto close = rest.find(") ");
    if (open != std::string_view::npos && close != std::string_view::npos && close > open) {
      v.name = std::string(rest.substr(open + 1, close - open - 1));
    }
    return v;
  }
  // "oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),...,task=python3,pid=4242,uid=1000"
  if (const auto at = line.find("oom-kill:"); at != std::string_view::npos) {
    OomVictim v;
    bool have_pid = false;
    for (const auto field : split(line.substr(at + 9), ',')) {
      if (field.starts_with("pid=")) {
        if (const auto pid = parse_pid_prefix(field.substr(4))) {
          v.pid = *pid;
          have_pid = true;
        }
      } else if (field.starts_with("task=")) {
        v.name = std::string(field.substr(5));
      }
    }
    if (have_pid) return v;
  }
  return std::nullopt;
}

ContentionTracker::ContentionTracker(ContentionThresholds thresholds) : thresholds_(thresholds) {}

std::vector<ContentionEvent> ContentionTracker::feed(const ContentionReading& r) {
  std::vector<ContentionEvent> events;
  const auto add = [&](ContentionKind k, std::optional<std::uint32_t> pid, std::string evidence) {
    events.push_back(ContentionEvent{k, r.at, pid, std::move(evidence)});
  };
  const ContentionReading* prev = previous_ ? &*previous_ : nullptr;

  if (r.psi_some_avg10 && *r.psi_some_avg10 >= thresholds_.psi_some_percent) {
    const auto before = prev ? prev->psi_some_avg10 : std::nullopt;
    if (!before || *r.psi_some_avg10 > *before) {
      add(ContentionKind::psi_some, std::nullopt,
          before ? fmt::format("PSI memory some avg10 {:.1f}% (was {:.1f}%)", *r.psi_some_avg10,
                               *before)
                 : fmt::format("PSI memory some avg10 {:.1f}%", *r.psi_some_avg10));
    }
  }
  if (r.psi_full_avg10 && *r.psi_full_avg10 >= thresholds_.psi_full_percent) {
    const auto before = prev ? prev->psi_full_avg10 : std::nullopt;
    if (!before || *r.psi_full_avg10 > *before) {
      add(ContentionKind::psi_full, std::nullopt,
          fmt::format("PSI memory full avg10 {:.1f}%: every task stalled on memory",
                      *r.psi_full_avg10));
    }
  }

  std::vector<std::uint32_t> victims;
  for (const auto& line : r.kernel_lines) {
    if (!is_oom_line(line)) continue;
    const auto victim = parse_oom_victim(line);
    if (victim) victims.push_back(victim->pid);
    if (victim || contains(line, "invoked oom-killer")) {
      add(ContentionKind::oom_kill,
          victim ? std::optional<std::uint32_t>(victim->pid) : std::nullopt,
          fmt::format("kernel: {}", quote_for_message(trim(line), 160)));
    }
  }

  if (prev) {
    const double seconds = std::chrono::duration<double>(r.at - prev->at).count();
    if (const auto v = rate(prev->pgmajfault, r.pgmajfault, seconds);
        v && *v >= thresholds_.major_faults_per_second) {
      add(ContentionKind::major_faults, std::nullopt,
          fmt::format("{:.0f} major faults/s (pgmajfault)", *v));
    }
    if (const auto v = rate(prev->workingset_refault, r.workingset_refault, seconds);
        v && *v >= thresholds_.refaults_per_second) {
      add(ContentionKind::refaults, std::nullopt,
          fmt::format("{:.0f} refaulted pages/s (workingset_refault)", *v));
    }
    if (const auto v = rate(prev->pswpin, r.pswpin, seconds);
        v && *v >= thresholds_.swap_in_per_second) {
      add(ContentionKind::swap_in, std::nullopt,
          fmt::format("{:.0f} pages/s swapped in (pswpin)", *v));
    }
    if (prev->oom_kill && r.oom_kill && *r.oom_kill > *prev->oom_kill && victims.empty()) {
      add(ContentionKind::oom_kill, std::nullopt,
          fmt::format("vmstat oom_kill rose by {}", *r.oom_kill - *prev->oom_kill));
    }
    for (const auto& before : prev->workloads) {
      const auto now =
          std::find_if(r.workloads.begin(), r.workloads.end(),
                       [&](const WorkloadMemoryReading& w) { return w.pid == before.pid; });
      if (now == r.workloads.end()) {
        if (before.resident_bytes < thresholds_.vanished_min_bytes) continue;
        const bool killed =
            std::find(victims.begin(), victims.end(), before.pid) != victims.end() ||
            std::find(oom_victims_.begin(), oom_victims_.end(), before.pid) != oom_victims_.end();
        add(ContentionKind::vanished, before.pid,
            fmt::format("{} {} gone while holding {}{}", before.label, before.pid,
                        format_bytes(before.resident_bytes),
                        killed ? ": killed by the kernel OOM killer" : ""));
        continue;
      }
      if (now->resident_bytes >= before.resident_bytes) continue;
      const std::uint64_t drop = before.resident_bytes - now->resident_bytes;
      if (drop >= thresholds_.rss_drop_min_bytes &&
          static_cast<double>(drop) >=
              thresholds_.rss_drop_fraction * static_cast<double>(before.resident_bytes)) {
        add(ContentionKind::evicted, before.pid,
            fmt::format("{} {} resident memory fell {} -> {} while still running", before.label,
                        before.pid, format_bytes(before.resident_bytes),
                        format_bytes(now->resident_bytes)));
      }
    }
  }
  oom_victims_ = std::move(victims);
  previous_ = r;
  return events;
}

}  // namespace sparkops::workloads
