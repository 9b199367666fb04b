#pragma once
// The ladder's rules, pure: which step comes next, which steps apply to a run, and whether a step
// may be recorded now (docs/oom-ladder.md: never skip; batch never first; packing before batch;
// bf16 LoRA before QLoRA; a smaller model or more machines last).

#include <cstdint>
#include <optional>
#include <string>

#include "base/result.hpp"
#include "ladder/ladder_state.hpp"
#include "plan/estimator.hpp"

namespace sparkops::ladder {

struct LadderContext {
  std::optional<plan::Method> method;  // the run's method; nullopt = not told (every step applies)
  std::optional<std::uint64_t> batch;  // the run's micro-batch; 1 means step 2b has nothing to cut
  bool server = false;  // the failed program is an inference server: its ladder (server_ladder.hpp)
};

enum class Force { no, yes };

// Whether `s` applies to the run; when it does not, `why` (if given) receives the reason.
bool step_applies(LadderStep s, const LadderContext& ctx, std::string* why = nullptr);

// The first applicable step not yet tried; nullopt when the ladder is resolved (the last record
// says the run went through) or exhausted.
std::optional<LadderStep> next_step(const LadderState& state, const LadderContext& ctx);

// Why `s` must be tried before the steps after it (one sentence, for refusals and advice).
std::string_view step_reason(LadderStep s);

// Ok when `s` may be recorded now; Errc::conflict naming the first earlier applicable step not yet
// tried (and why it comes first), or saying that `s` does not apply. Force::yes allows both.
Status check_can_record(const LadderState& state, LadderStep s, const LadderContext& ctx,
                        Force force);

// check_can_record, then appends the record (forced marks a record that skipped a step).
Status record_step(LadderState& state, LadderStep s, StepResult result, SystemTime at,
                   const LadderContext& ctx, Force force, std::string note = {});

}  // namespace sparkops::ladder
