#pragma once
// Anchors: known-good runs to compare an estimate with (the skill's four, embedded from
// data/anchors.json, plus the user's ~/.local/share/sparkops/anchors.jsonl, one JSON object per
// measured run; docs/estimator.md "Anchors" documents the schema).

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "plan/estimator.hpp"

namespace sparkops::plan {

// measured_peak: `peak_pool_bytes` was seen. fits_ceiling: the run is known to fit (no number);
// `seq`/`batch` are the largest known to fit.
enum class AnchorKind { measured_peak, fits_ceiling };

struct Anchor {
  std::string id;
  std::string model;  // "Llama-3.1-70B" or free text
  std::uint64_t params = 0;
  Method method = Method::lora;
  AnchorKind kind = AnchorKind::measured_peak;
  std::optional<std::uint64_t> peak_pool_bytes;
  std::optional<std::uint64_t> peak_allocated_bytes;
  std::optional<std::uint64_t> batch;
  std::optional<std::uint64_t> seq;
  std::string source;  // "skill", "user", a file path
  std::string note;
};

// Pure. One JSON object per line; blank lines skipped. A bad line is an Error naming `source` and
// the line number (callers decide whether to skip the file).
//   {"model":"Llama-3.1-70B","params":70553706496,"method":"qlora","peak_pool_bytes":42949672960}
Result<std::vector<Anchor>> parse_anchors_jsonl(std::string_view text, std::string_view source);
// Pure: the embedded anchors file (a JSON array of the same objects).
Result<std::vector<Anchor>> parse_anchors_json(std::string_view text, std::string_view source);
// The skill's four, from data/anchors.json compiled in.
std::vector<Anchor> embedded_anchors();
// One anchor record as a JSONL line (no newline), the format `watch` appends.
std::string anchor_to_jsonl(const Anchor& a);

struct AnchorMatch {
  Anchor anchor;
  double params_ratio = 1.0;             // plan params / anchor params
  std::optional<double> estimate_ratio;  // plan peak / anchor peak (measured anchors), like for
                                         // like: at the anchor's batch and seq when it has them
  // The run's own configuration differed from the anchor's: the batch and seq compared at, and
  // this run's estimate over the anchor's peak.
  std::optional<std::uint64_t> compared_batch, compared_seq;
  std::optional<double> run_ratio;
  bool far = false;     // same class and the estimate is > 25 % away (or wont_fit vs a
                        // fits_ceiling anchor at a shorter or equal packing)
  std::string message;  // one line for the table
};

// The nearest anchor by |log(params ratio)|, preferring the same method. `same class` = same
// method and params within a factor 1.5.
// A measured anchor is compared like with like: its peak_allocated_bytes with the estimate's
// allocated peak when it has one, else its peak_pool_bytes with the estimate's pool peak; and,
// when it records a batch or seq the run does not use and `reestimate` is given, with the estimate
// of this run at the anchor's batch and seq (a peak measured at 512 tokens says nothing about the
// same run's 2048-token logits).
using Reestimate = std::function<Estimate(const RunConfig&)>;
std::optional<AnchorMatch> nearest_anchor(const std::vector<Anchor>& anchors, std::uint64_t params,
                                          const RunConfig& run, const Estimate& estimate, bool fits,
                                          const Reestimate& reestimate = {});

}  // namespace sparkops::plan
