#pragma once
// Text and JSON for `sparkops oom` and `sparkops flush`. Pure functions of their inputs, pinned by
// golden files (tests/fixtures/golden/ladder/).

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ladder/flush.hpp"
#include "ladder/ladder_advice.hpp"
#include "ladder/oom_report.hpp"

namespace sparkops::ladder {

struct OomView {
  std::optional<OomReport> report;  // nullopt: no log given
  LadderState state;
  LadderContext ctx;
  OomAdvice advice;
  std::string state_path;
  bool state_saved = false;            // the state file exists after this command
  std::optional<StepRecord> recorded;  // --done STEP
};

std::string render_oom_text(const OomView& v);
nlohmann::json oom_to_json(const OomView& v);

struct FlushView {
  FlushOutcome outcome;
  FlushMode mode = FlushMode::flush;
  std::vector<std::string> trainers;       // forced past these
  std::optional<std::string> recorded_in;  // state file where step 1 was recorded
};

// The warnings of a flush (a --force past a running trainer): the text's "Warning:" lines and
// the JSON's `notes`.
std::vector<std::string> flush_notes(const FlushView& v);
std::string render_flush_text(const FlushView& v);
nlohmann::json flush_to_json(const FlushView& v);

}  // namespace sparkops::ladder
