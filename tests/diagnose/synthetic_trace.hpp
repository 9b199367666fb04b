#pragma once
// Generates a training run for the diagnosis tests: a Hugging Face Trainer log (tqdm bar with '\r'
// redraws and tqdm's smoothed rate, metric dicts, an evaluation bar and dict, checkpoint lines) and
// the thermal samples taken beside it, in the extended CSV and in the skill's 3-column CSV.

#include <cstdint>
#include <string>
#include <vector>

#include "base/clock.hpp"

namespace sparkops::test {

enum class EpisodeKind { thermal, contention };

struct Episode {
  EpisodeKind kind;
  std::int64_t first_step;
  std::int64_t last_step;
  double seconds;  // true step time during the episode
};

struct Interruption {
  std::int64_t after_step;
  double seconds;
};

struct TraceSpec {
  std::int64_t steps = 400;
  double base_seconds = 2.0;
  SystemTime start = SystemTime{std::chrono::seconds{1762680372}};  // 2025-11-09T09:26:12Z
  double sample_interval_seconds = 10;
  std::vector<Episode> episodes;
  std::vector<Interruption> evals;
  std::vector<Interruption> checkpoints;
};

struct Trace {
  std::string log;
  std::string extended_csv;
  std::string smi_csv;  // timestamp,temperature.gpu,power.draw (UTC)
};

Trace make_trace(const TraceSpec& spec);

}  // namespace sparkops::test
