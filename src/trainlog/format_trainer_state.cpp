#include "trainlog/format_trainer_state.hpp"

#include <nlohmann/json.hpp>

#include "base/text.hpp"
#include "trainlog/series_builder.hpp"

namespace sparkops::trainlog {

namespace {

std::optional<double> number(const nlohmann::json& o, const char* key) {
  const auto it = o.find(key);
  if (it == o.end()) return std::nullopt;
  if (it->is_number()) return it->get<double>();
  return std::nullopt;
}

// A step or step count: a whole number in [0, 2^53]. Anything else ({"step": 1e300}, -1, 2.5)
// is not a step a trainer wrote.
enum class StepField { absent, valid, invalid };
StepField step_number(const nlohmann::json& o, const char* key, std::int64_t& out) {
  const auto v = number(o, key);
  if (!v) return o.contains(key) ? StepField::invalid : StepField::absent;
  const auto n = exact_integer(*v);
  if (!n || *n < 0) return StepField::invalid;
  out = *n;
  return StepField::valid;
}

}  // namespace

Result<StepSeries> parse_trainer_state(std::string_view json_text, std::string_view name) {
  const auto j = nlohmann::json::parse(json_text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return fail(Errc::malformed, std::string(name) + ": trainer_state.json is not valid JSON");
  }
  const auto hist = j.find("log_history");
  if (hist == j.end() || !hist->is_array()) {
    return fail(Errc::malformed,
                std::string(name) + ": trainer_state.json has no log_history array");
  }
  SeriesBuilder b;
  b.series().format = LogFormat::trainer_state;
  if (std::int64_t ms = 0; step_number(j, "max_steps", ms) == StepField::valid && ms > 0) {
    b.series().total_steps = ms;
  }
  for (const auto& e : *hist) {
    if (!e.is_object()) {
      ++b.notes().malformed_records;
      continue;
    }
    std::int64_t step_value = 0;
    const StepField step_field = step_number(e, "step", step_value);
    if (step_field == StepField::invalid) {
      ++b.notes().malformed_records;
      continue;
    }
    const std::optional<std::int64_t> step =
        step_field == StepField::valid ? std::optional<std::int64_t>(step_value) : std::nullopt;
    if (const auto rt = number(e, "train_runtime")) {
      b.series().train_runtime_seconds = *rt;
      continue;
    }
    if (e.contains("eval_loss") || number(e, "eval_runtime")) {
      Marker m;
      m.kind = MarkerKind::eval;
      if (step) m.step = *step;
      m.duration_seconds = number(e, "eval_runtime");
      m.detail = "log_history eval entry";
      b.add_marker(std::move(m));
      continue;
    }
    if (!step || !e.contains("loss")) continue;
    StepRecord r;
    r.step = *step;
    b.add_step(r);
  }
  return b.take();
}

}  // namespace sparkops::trainlog
