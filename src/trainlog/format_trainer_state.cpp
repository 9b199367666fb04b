#include "trainlog/format_trainer_state.hpp"

#include <optional>
#include <string>

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

// Whether the text fails to parse only because it ends early: the parser's error is at the end of
// input (the Trainer rewrites trainer_state.json at every save, so a copy taken mid-write, a
// truncated upload or paste, stops inside the document). An error anywhere else is not a cut-off.
bool cut_off(std::string_view text) {
  const auto last = text.find_last_not_of(" \t\r\n");
  if (last == std::string_view::npos) return false;
  try {
    const auto whole = nlohmann::json::parse(text);
    return whole.is_discarded();  // parsed after all: nothing to salvage
  } catch (const nlohmann::json::parse_error& e) {
    return e.byte > last + 1;  // byte is 1-based: past the last non-space byte = end of input
  } catch (const nlohmann::json::exception&) {
    return false;  // a number out of range ("1e400") and the like: broken, not cut off
  }
}

// The complete entries of a cut-off document's log_history: every balanced top-level "{...}"
// after `"log_history": [`, strings respected, up to the array's end or the end of the text.
// transformers writes the state with json.dumps(..., indent=2, sort_keys=True), so "max_steps"
// comes after log_history and is kept only when the cut falls after it.
std::optional<nlohmann::json> salvage(std::string_view text) {
  const auto at = text.find("\"log_history\"");
  if (at == std::string_view::npos) return std::nullopt;
  const auto open = text.find('[', at);
  if (open == std::string_view::npos) return std::nullopt;
  nlohmann::json entries = nlohmann::json::array();
  std::size_t depth = 0;
  std::size_t start = 0;
  bool in_string = false;
  bool escaped = false;
  std::size_t i = open + 1;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{') {
      if (depth++ == 0) start = i;
    } else if (c == '}' && depth > 0) {
      if (--depth == 0) {
        auto e = nlohmann::json::parse(text.substr(start, i - start + 1), nullptr, false);
        if (!e.is_discarded()) entries.push_back(std::move(e));
      }
    } else if (c == ']' && depth == 0) {
      break;
    }
  }
  if (entries.empty()) return std::nullopt;
  nlohmann::json doc = nlohmann::json::object();
  doc["log_history"] = std::move(entries);
  // "max_steps": N written whole after the array.
  const auto key = text.find("\"max_steps\"", i);
  if (key != std::string_view::npos) {
    const auto colon = text.find(':', key);
    const auto end = colon == std::string_view::npos ? colon : text.find_first_of(",}\n", colon);
    if (end != std::string_view::npos) {
      const auto v = nlohmann::json::parse(text.substr(colon + 1, end - colon - 1), nullptr, false);
      if (!v.is_discarded() && v.is_number()) doc["max_steps"] = v;
    }
  }
  return doc;
}

}  // namespace

Result<StepSeries> parse_trainer_state(std::string_view json_text, std::string_view name) {
  auto j = nlohmann::json::parse(json_text, nullptr, false);
  bool salvaged = false;
  if (j.is_discarded() && cut_off(json_text)) {
    if (auto partial = salvage(json_text)) {
      j = std::move(*partial);
      salvaged = true;
    }
  }
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
    r.loss = number(e, "loss");
    b.add_step(r);
  }
  if (salvaged) b.notes().truncated_document = true;
  return b.take();
}

}  // namespace sparkops::trainlog
