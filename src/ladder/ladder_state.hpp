#pragma once
// The OOM ladder's steps and the per-run state file that remembers which were tried, when, and
// with what result (docs/oom-ladder.md "The ladder"). The file is small JSON, written atomically; a
// file that does not parse is an Error (never silently reset: it is the user's history).

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.hpp"
#include "base/output_file.hpp"
#include "base/result.hpp"

namespace sparkops::ladder {

// In ladder order. Reducing batch is never first; packing comes before batch; bf16 LoRA before
// QLoRA; a smaller model or more machines only after all of them.
enum class LadderStep {
  flush,         // "1":  drop the page cache (sparkops flush)
  packing,       // "2a": cut the packing length
  batch,         // "2b": cut the micro-batch
  method_lora,   // "3a": full fine-tune -> bf16 LoRA
  method_qlora,  // "3b": bf16 LoRA -> QLoRA
  server_hold,   // "2s": a server: lower its context / sequences / KV dtype (server_ladder.hpp)
  server_cap,    // "3s": a server: lower its cap (--gpu-memory-utilization, -ngl, loaded models)
  scale,         // "4":  a smaller model, or several machines (--nodes 2); a server: a smaller or
                 //       more quantized model
};
// Training runs take 1, 2a, 2b, 3a, 3b, 4; servers take 1, 2s, 3s, 4 (ladder.hpp step_applies).
inline constexpr LadderStep kLadderOrder[] = {LadderStep::flush,        LadderStep::packing,
                                              LadderStep::batch,        LadderStep::method_lora,
                                              LadderStep::method_qlora, LadderStep::server_hold,
                                              LadderStep::server_cap,   LadderStep::scale};

std::string_view step_id(LadderStep s);     // "1", "2a", "2b", "3a", "3b", "4"
std::string_view step_name(LadderStep s);   // "flush", "packing", "batch", "lora", "qlora", "scale"
std::string_view step_title(LadderStep s);  // "flush the page cache", ...
// Accepts the id ("2a") or the name ("packing"), case-sensitive.
std::optional<LadderStep> parse_step(std::string_view text);

enum class StepResult { oom, ok };  // the run after the step still OOMed / ran
std::string_view step_result_name(StepResult r);
std::optional<StepResult> parse_step_result(std::string_view text);

struct StepRecord {
  LadderStep step = LadderStep::flush;
  SystemTime at{};
  StepResult result = StepResult::oom;
  bool forced = false;  // recorded with --force before an earlier step was tried
  std::string note;     // "reclaimed 12.3 GiB", "seq 4096 -> 2048"
};

struct LastOom {
  std::string kind;
  std::string phase;
  SystemTime at{};
};

struct LadderState {
  SystemTime created{};
  std::vector<StepRecord> steps;  // in the order recorded
  std::optional<LastOom> last_oom;

  bool tried(LadderStep s) const;
  const StepRecord* last() const { return steps.empty() ? nullptr : &steps.back(); }
  bool resolved() const { return last() != nullptr && last()->result == StepResult::ok; }
};

inline constexpr int kLadderStateVersion = 1;

// Pure. Every field is checked: a wrong type, an unknown step or result, a missing version is an
// Error naming `source` (Errc::malformed).
Result<LadderState> parse_ladder_state(std::string_view json_text, std::string_view source);
std::string serialize_ladder_state(const LadderState& state);  // pretty JSON, trailing newline

// not_found when the file does not exist (callers start a fresh state); malformed when corrupt.
Result<LadderState> load_ladder_state(const std::filesystem::path& path);
// Creates the parent directory (./.sparkops) when missing; atomic replace.
// Atomic write (base/file_io.hpp write_file_atomic) into a checked directory unless `trust` says
// so.
Status save_ladder_state(const std::filesystem::path& path, const LadderState& state,
                         OutputTrust trust = OutputTrust::checked);

}  // namespace sparkops::ladder
