#include "trainlog/format_trainer_state.hpp"

#include <nlohmann/json.hpp>

#include "trainlog/series_builder.hpp"

namespace sparkops::trainlog {

namespace {

std::optional<double> number(const nlohmann::json& o, const char* key) {
  const auto it = o.find(key);
  if (it == o.end()) return std::nullopt;
  if (it->is_number()) return it->get<double>();
  return std::nullopt;
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
  if (const auto ms = number(j, "max_steps"); ms && *ms > 0) {
    b.series().total_steps = static_cast<std::int64_t>(*ms);
  }
  for (const auto& e : *hist) {
    if (!e.is_object()) {
      ++b.notes().malformed_records;
      continue;
    }
    const auto step = number(e, "step");
    if (const auto rt = number(e, "train_runtime")) {
      b.series().train_runtime_seconds = *rt;
      continue;
    }
    if (e.contains("eval_loss") || number(e, "eval_runtime")) {
      Marker m;
      m.kind = MarkerKind::eval;
      if (step) m.step = static_cast<std::int64_t>(*step);
      m.duration_seconds = number(e, "eval_runtime");
      m.detail = "log_history eval entry";
      b.add_marker(std::move(m));
      continue;
    }
    if (!step || !e.contains("loss")) continue;
    StepRecord r;
    r.step = static_cast<std::int64_t>(*step);
    b.add_step(r);
  }
  return b.take();
}

}  // namespace sparkops::trainlog
