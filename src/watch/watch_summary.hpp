#pragma once
// The summary `sparkops watch` prints when the job ends (text on stderr, JSON with --json, and
// always summary.json in the run folder). Pure functions of the view.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "diagnose/diagnosis.hpp"
#include "ladder/ladder_advice.hpp"
#include "ladder/oom_report.hpp"
#include "watch/watch_session.hpp"

namespace sparkops::watch {

struct WatchSummaryView {
  std::vector<std::string> command;
  std::string dir;
  std::string log;
  const WatchOutcome* outcome = nullptr;
  std::optional<trainlog::StepSeries>
      series;  // as analyze reads the log back (else the live parse)
  std::optional<diagnose::Diagnosis> diagnosis;
  std::optional<std::uint64_t> plan_peak_bytes;  // the plan's pool peak, when plan flags were given
  std::optional<std::string> anchor_file;        // where the measured anchor was appended
  std::optional<ladder::OomReport> oom;          // set when the job died of an OOM
  std::optional<ladder::StepAdvice> next_step;   // the ladder's next step for that OOM
  // Every warning watch printed: the pre-flight's, the session's, the finish's (docs/json.md).
  std::vector<std::string> notes;
};

std::string render_watch_summary_text(const WatchSummaryView& v);
nlohmann::ordered_json watch_summary_json(const WatchSummaryView& v);

// "exited with status 3", "killed by signal 9 (SIGKILL)".
std::string describe_exit(const WatchOutcome& o);

}  // namespace sparkops::watch
