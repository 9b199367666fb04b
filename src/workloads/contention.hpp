#pragma once
// Silent eviction, noticed. On a unified pool an inference server and a trainer evict each other's
// pages without either logging an OOM; the signs are elsewhere: PSI memory pressure rising, major
// faults and refaults, swap-in, a workload's resident memory falling sharply while it keeps
// running, a process that held memory disappearing, and kernel OOM lines.
//
// ContentionTracker is pure: it takes values already read (by sample/watch/serve through the host
// readers) one reading at a time and returns the events each new reading shows, with evidence.
// Not thread-safe: one sampler feeds it.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.hpp"

namespace sparkops::workloads {

struct WorkloadMemoryReading {
  std::uint32_t pid = 0;
  std::string label;                 // "vLLM", "TRL"
  std::uint64_t resident_bytes = 0;  // PSS or RSS (+ GPU), as the scan reports `actual`
};

struct ContentionReading {
  SteadyTime at{};
  std::optional<double> psi_some_avg10;  // /proc/pressure/memory, percent
  std::optional<double> psi_full_avg10;
  // Cumulative /proc/vmstat counters.
  std::optional<std::uint64_t> pgmajfault;
  std::optional<std::uint64_t>
      workingset_refault;  // workingset_refault_anon + _file (or the old single one)
  std::optional<std::uint64_t> pswpin;
  std::optional<std::uint64_t> oom_kill;
  std::vector<WorkloadMemoryReading> workloads;
  std::vector<std::string> kernel_lines;  // kernel log lines new since the previous reading
};

enum class ContentionKind {
  psi_some,      // memory pressure (some) above the threshold and rising
  psi_full,      // every task stalled on memory for part of the window
  major_faults,  // pages read back from disk, per second
  refaults,      // evicted pages needed again, per second
  swap_in,       // pages swapped in, per second
  evicted,       // a workload's resident memory fell sharply while it kept running
  vanished,      // a workload that held memory is gone (exited, or killed)
  oom_kill,      // the kernel's oom_kill counter moved, or an OOM line was logged
};
std::string_view contention_kind_name(ContentionKind k);

struct ContentionEvent {
  ContentionKind kind = ContentionKind::psi_some;
  SteadyTime at{};
  std::optional<std::uint32_t> pid;
  std::string evidence;  // "PSI memory some avg10 23.5% (was 4.0%)"
};

struct ContentionThresholds {
  double psi_some_percent = 10.0;
  double psi_full_percent = 2.0;
  double major_faults_per_second = 200.0;
  double refaults_per_second = 2000.0;            // pages
  double swap_in_per_second = 256.0;              // pages (1 MiB/s with 4 KiB pages)
  double rss_drop_fraction = 0.3;                 // resident memory falling by this share ...
  std::uint64_t rss_drop_min_bytes = 1ULL << 30;  // ... and by at least this much
  std::uint64_t vanished_min_bytes = 1ULL << 30;
};

// A kernel OOM line's victim: "Out of memory: Killed process 4242 (python3) total-vm:..." and
// "oom-kill:constraint=CONSTRAINT_NONE,...,task=python3,pid=4242,uid=1000". nullopt otherwise.
struct OomVictim {
  std::uint32_t pid = 0;
  std::string name;
};
std::optional<OomVictim> parse_oom_victim(std::string_view kernel_line);
bool is_oom_line(std::string_view kernel_line);

class ContentionTracker {
 public:
  explicit ContentionTracker(ContentionThresholds thresholds = {});
  // Events this reading shows compared with the previous one. The first reading only reports
  // kernel OOM lines and absolute PSI levels.
  std::vector<ContentionEvent> feed(const ContentionReading& reading);

 private:
  ContentionThresholds thresholds_;
  std::optional<ContentionReading> previous_;
  std::vector<std::uint32_t>
      oom_victims_;  // PIDs named by OOM lines in this or the previous reading
};

}  // namespace sparkops::workloads
