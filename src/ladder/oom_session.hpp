#pragma once
// The `oom` session around the ladder: load the state file, take the step being recorded, read
// and classify the text (a file or a stream), then record what happened, save the state when the
// user acted on it, and advise the next step. What the run is (its plan, its server) comes from the
// caller, which owns the plan flags.

#include <cstdio>
#include <optional>
#include <string>

#include "base/clock.hpp"
#include "base/output_file.hpp"
#include "base/progress.hpp"
#include "base/result.hpp"
#include "host/pool.hpp"
#include "ladder/ladder.hpp"
#include "ladder/ladder_advice.hpp"
#include "ladder/oom_render.hpp"
#include "plan/plan_args.hpp"
#include "serving/server_log.hpp"
#include "serving/serving_plan.hpp"

namespace sparkops::ladder {

struct OomRequest {
  std::string log;  // --log FILE; "-" = `input`; empty = `input` unless it is a terminal or --done
  std::string state_path = ".sparkops/ladder.json";
  bool state_given = false;  // --state named: a classified OOM is saved even without --done
  std::string done;          // --done STEP (id or name); empty: nothing recorded
  std::string result = "oom";
  bool force = false;
  std::FILE* input = stdin;        // the stream read when the log is "-" or implicit
  bool input_is_terminal = false;  // an implicit log is not read from a terminal
  // Told the bytes of the text read so far, as the one pass goes (the caller draws a progress
  // line, or nothing); empty: not told.
  ByteProgress progress;
};

struct OomSession {
  OomView view;  // the state, the report (nullopt: no text given)
  std::optional<LadderStep> done;
  StepResult result = StepResult::oom;
  bool state_exists = false;
  serving::ServerLogFacts facts;  // what an inference server's lines in the text say
};

// Loads the state (a missing file starts a fresh one stamped now), parses --done and --result,
// reads the text through the classifier and the server-log scanner. Every error is bad input and
// names the file or flag.
Result<OomSession> begin_oom(const OomRequest& request, Clock& clock);

// What the run is, from the caller's plan flags.
struct OomRun {
  std::optional<PlannedRun> planned;
  std::optional<host::PoolView> pool;
  std::optional<serving::ServeEngine> server_engine;  // --serve ENGINE
  std::optional<serving::ServingPlan> serving;
  std::string model_arg;
};

// The run the plan flags name (MODEL or --params), planned on `env` for the ladder's steps, with
// the pool the plan read; nothing without a model. The plan's error (a bad flag, a model that
// cannot be read) is returned.
Status plan_oom_run(const plan::PlanArgs& args, const plan::PlanEnvironment& env, OomRun& run);

// The method and batch the ladder's steps start from: the planned run's, else --method and --batch
// where the user gave them (`method_given`, `batch_given`: a flag's default says nothing about the
// run that failed). Errors name the flag.
Status oom_run_context(const plan::PlanArgs& args, bool method_given, bool batch_given,
                       const OomRun& run, LadderContext& ctx);

// Takes the server's ladder when --serve named an engine or the failure text is a server's, notes
// the OOM, records --done, saves the state when the user acted on the ladder (--done) or named
// the file (--state), and fills session.view.advice. An error (a step refused, a state file that
// cannot be written) is the command failing.
Status conclude_oom(OomSession& session, const OomRequest& request, OomRun run, OutputTrust trust,
                    Clock& clock);

// README "Exit codes": a text with no out-of-memory failure in it answers "no" (1), unless the
// command only recorded a step.
int oom_exit_code(const OomSession& session);

}  // namespace sparkops::ladder
