#pragma once
// ThrottleDetector: turns the sample stream into explicit throttle episodes (docs/csv-format.md
// "Events file"; docs/domain.md "Thermals and throttling"). Pure: fed Samples, returns events; no
// clock, no I/O. One episode per (GPU, cause); causes overlap freely.
//
// Causes and their evidence:
//  - sw_power_cap, sw_thermal, hw_thermal, hw_power_brake: the reason bit is set OR the cumulative
//    counter advanced during the interval (the bits miss most throttling; the counters do not).
//  - hw_slowdown: the reason bit (NVML has no counter for it).
//  - platform_cap: every sample of the window at the power ceiling while the temperature climbs
//    over the window (or sits at/above hot_celsius), under load: the thermal rule's signature
//    (sampling/thermal_rule.hpp, which `analyze` applies to the same numbers offline).
//  - unflagged_low_clock: under load, SM clock < low_clock_ratio x its max, with no throttling bit
//    and no counter advancing (GB10's stuck-clock state).
//  - unflagged_low_power: under load, power < low_power_ratio x the run's own earlier busy peak,
//  with
//    no throttling bit and no counter advancing (GB10's "slow" state at full clock).
//  - gpu_lost: the GPU source reports lost (driver reload, GPU_IS_LOST); gpu_hung: a driver call
//    has not returned within the watchdog timeout (gpu/watchdog_source.hpp); host_sensor_lost: the
//    hottest host sensor disappeared after having been read.
// Bits and counters and lost states start/end on the first sample that shows/clears them; the three
// heuristic causes need `sustain_samples` consecutive samples both to start and to end.

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.hpp"
#include "config/thermal_thresholds.hpp"
#include "sampling/sample.hpp"

namespace sparkops::sampling {

// The thresholds (ThermalThresholds: the thermal.* keys and their defaults) plus how the live
// detector looks at the stream.
struct DetectorConfig : config::ThermalThresholds {
  std::chrono::nanoseconds min_counter_increase = std::chrono::milliseconds{1};
  std::size_t sustain_samples = 2;
  std::size_t window_samples = 4;         // history for "power flat" and "temperature climbs"
  std::size_t reference_min_samples = 3;  // busy samples before "the run's own level" counts
};

enum class ThrottleCause {
  sw_power_cap,
  hw_slowdown,
  sw_thermal,
  hw_thermal,
  hw_power_brake,
  platform_cap,
  unflagged_low_clock,
  unflagged_low_power,
  gpu_lost,
  host_sensor_lost,
  gpu_hung,
};
inline constexpr std::size_t kThrottleCauseCount = 11;
std::string_view throttle_cause_name(ThrottleCause cause);

enum class EpisodeEdge { start, end };

struct ThrottleEvent {
  SystemTime time{};  // start: first sample showing the cause; end: first sample without it
  EpisodeEdge edge = EpisodeEdge::start;
  ThrottleCause cause = ThrottleCause::sw_power_cap;
  std::optional<unsigned> gpu_index;  // absent for host-wide causes
  std::string evidence;               // "key=value key=value", numbers locale-free
};

// "2025-11-09T09:26:12.345Z start cause=sw_thermal gpu=0 counter_delta_s=12.300 ...\n"
std::string format_event_line(const ThrottleEvent& event);

class ThrottleDetector {
 public:
  explicit ThrottleDetector(DetectorConfig config = {});
  std::vector<ThrottleEvent> feed(const Sample& sample);
  // Ends every open episode at `time` (the sampler stops); evidence says so.
  std::vector<ThrottleEvent> finish(SystemTime time);

 private:
  struct Episode {
    bool open = false;
    std::size_t on_streak = 0;
    std::size_t off_streak = 0;
    SystemTime first_seen{};   // first sample of the current on-streak
    SystemTime first_clear{};  // first sample of the current off-streak
    std::string first_evidence;
    std::size_t samples = 0;
    double counter_total_s = 0.0;
  };
  struct Point {
    std::optional<double> power_w;
    std::optional<double> temp_c;
  };
  struct GpuTrack {
    std::array<Episode, kThrottleCauseCount> episodes{};
    std::deque<Point> window;
    double busy_power_peak_w = 0.0;
    std::size_t busy_samples = 0;
  };
  struct Observation {
    bool seen = false;
    std::string evidence;
    double counter_s = 0.0;
  };

  void step(Episode& ep, ThrottleCause cause, std::optional<unsigned> gpu, const Observation& obs,
            std::size_t sustain, SystemTime now, std::vector<ThrottleEvent>& out);
  void feed_gpu(const Sample& sample, const GpuReading& gpu, GpuTrack& track,
                std::vector<ThrottleEvent>& out);

  DetectorConfig config_;
  std::map<unsigned, GpuTrack> gpus_;
  Episode gpu_lost_;
  Episode gpu_hung_;
  Episode sensor_lost_;
  bool sensor_seen_ = false;
};

}  // namespace sparkops::sampling
