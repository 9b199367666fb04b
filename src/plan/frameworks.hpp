#pragma once
// Framework presets: the run fields a training framework decides for its users (loss path, LoRA
// dropout and adapter dtype, how its loop and quantization plugin hold memory), each sourced from
// that framework's code or shipped config at a named version (docs/estimator.md "Framework
// presets"). A preset sets only what the framework decides; the user's flags win afterwards.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "plan/estimator.hpp"

namespace sparkops::plan {

// Framework (estimator.hpp) lists only frameworks whose memory-relevant defaults were read from
// their code; docs/estimator.md "Framework presets" has one row per default with its source.

struct FrameworkPreset {
  Framework id;
  std::string_view name;     // the --framework value
  std::string_view version;  // the release whose code the defaults come from
  std::string_view summary;  // one line: what the preset sets, for `plan` output
  // The transformers release(s) that framework version runs (its pin or range), where its loss is
  // the HF model's own (hf_stack presets): which HF loss program the preset runs. Empty: the
  // framework computes its own loss.
  std::string_view transformers = {};
};

const std::vector<FrameworkPreset>& framework_presets();
const FrameworkPreset& framework_preset(Framework f);
Result<Framework> parse_framework(std::string_view s);  // Error names --framework
std::string framework_choices();                        // "hf|trl|...", for messages

// The framework a DGX Spark user most often runs: Hugging Face transformers Trainer + PEFT.
inline constexpr Framework kDefaultFramework = Framework::hf;

// Sets the framework-decided fields of `run` for its method (call before applying user flags).
void apply_framework(Framework f, RunConfig& run);

// What the framework decides once the ranks and the accumulation are known (call after both,
// with whether --optim was given): torchtune's single-device full recipes step bitsandbytes'
// PagedAdamW8bit inside the backward (RunConfig::optimizer_in_backward).
void apply_framework_topology(RunConfig& run, bool optim_given);

// The micro-batches per optimizer step the framework runs when the user names none (ms-swift:
// enough for 16 sequences a step over all ranks); 1 for a framework that does not accumulate
// by default. `ranks` = nodes x GPUs per node.
std::uint64_t framework_grad_accum(Framework f, std::uint64_t batch, std::uint64_t ranks);

}  // namespace sparkops::plan
