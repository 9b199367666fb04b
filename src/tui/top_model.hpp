#pragma once
// TopModel: what one frame of `sparkops top` shows, as plain data. TopTracker (top_tracker.hpp)
// builds it from consecutive StatusReports; build_frame (frame_builder.hpp) turns it into lines.
// Nothing here reads the machine, so a model written by hand renders the same frame every time
// (the goldens at 80x24 and 160x48 are built that way).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.hpp"
#include "config/pool_sections.hpp"
#include "sampling/throttle_detector.hpp"
#include "status/status_report.hpp"
#include "workloads/contention.hpp"

namespace sparkops::tui {

// Oldest first; an absent reading is a gap in the sparkline.
using Series = std::vector<std::optional<double>>;

// Per GPU: what the counters and the detector say about the last interval.
struct GpuActivity {
  unsigned index = 0;
  // Time each clocks-event counter advanced during the last interval (absent on the first
  // refresh or when the driver does not report that counter).
  gpu::ThrottleCounters counter_deltas;
  std::chrono::nanoseconds interval{};  // the interval the deltas cover; 0 on the first refresh
  // Episodes the ThrottleDetector has open now (its names: "sw_thermal", "platform_cap", ...).
  std::vector<sampling::ThrottleCause> open_causes;
  Series temperature_celsius;
  Series power_watts;
};

enum class EventSeverity { info, warning, alert };

struct EventLine {
  SystemTime time{};
  EventSeverity severity = EventSeverity::info;
  std::string text;  // "start sw_thermal gpu=0 counter_delta_s=2.000", "PSI memory some 23.5%"
};

// Totals since `top` started (the first report is the baseline).
struct SinceStart {
  std::optional<std::uint64_t> refaults;      // workingset_refault (anon + file), pages
  std::optional<double> refaults_per_second;  // over the last interval
  std::optional<std::uint64_t> major_faults;
  std::optional<std::uint64_t> oom_kills;  // /proc/vmstat oom_kill
  std::chrono::nanoseconds elapsed{};
};

// Thresholds that colour figures; each comes from the rule that owns it (no separate tuning).
struct Thresholds {
  sampling::DetectorConfig detector;  // ceiling_watts, ceiling_band_watts, hot_celsius
  workloads::ContentionThresholds
      pressure;  // psi_some_percent, psi_full_percent, refaults_per_second
  // A budget below this is "tight" (the coexistence rule's margin, workloads/coexistence.hpp).
  std::uint64_t tight_margin_bytes = config::CoexistenceMargin{}.tight_margin_bytes;
};

struct TopModel {
  status::StatusReport report;
  std::uint64_t refreshes = 0;  // reports observed
  Series pool_available_bytes;
  Series pool_free_bytes;
  std::vector<GpuActivity> gpus;  // same order as report.gpu.snapshots
  SinceStart since_start;
  std::deque<EventLine> events;  // oldest first, at most TopTracker's event capacity
  Thresholds thresholds;
};

enum class SortKey { memory, cap, age };
std::string_view sort_key_name(SortKey key);  // "memory", "cap", "age"

// The interactive state the keys change (top_controller.hpp); `--once` uses the defaults.
struct ViewState {
  SortKey sort = SortKey::memory;
  std::size_t selected = 0;  // row in the sorted workload table
  bool help = false;
  bool frozen = false;
  std::chrono::milliseconds interval{1000};
  std::optional<std::uint32_t> confirm_pid;  // `k` pressed: waiting for y/n
  std::string message;                       // one line at the bottom ("SIGTERM sent to 4242")
};

// The workload table in display order: `memory` by actual bytes (largest first), `cap` capped
// first then fixed then uncapped (each by claim, largest first), `age` oldest first. Ties by PID.
std::vector<const status::WorkloadLine*> sorted_workloads(const status::StatusReport& report,
                                                          SortKey key);

}  // namespace sparkops::tui
