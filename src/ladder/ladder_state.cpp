#include "ladder/ladder_state.hpp"

#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/file_io.hpp"
#include "base/json_text.hpp"
#include "base/time_format.hpp"

namespace sparkops::ladder {
namespace {

using nlohmann::json;

struct StepInfo {
  LadderStep step;
  std::string_view id;
  std::string_view name;
  std::string_view title;
};

constexpr StepInfo kSteps[] = {
    {LadderStep::flush, "1", "flush", "flush the page cache"},
    {LadderStep::packing, "2a", "packing", "cut the packing length"},
    {LadderStep::batch, "2b", "batch", "cut the micro-batch"},
    {LadderStep::method_lora, "3a", "lora", "full fine-tune -> bf16 LoRA"},
    {LadderStep::method_qlora, "3b", "qlora", "bf16 LoRA -> QLoRA"},
    {LadderStep::server_hold, "2s", "hold", "server: lower context/sequences/KV"},
    {LadderStep::server_cap, "3s", "cap", "server: lower its memory cap"},
    {LadderStep::scale, "4", "scale", "a smaller model or several machines"},
};

const StepInfo& info(LadderStep s) {
  for (const auto& i : kSteps) {
    if (i.step == s) return i;
  }
  return kSteps[0];
}

Error corrupt(std::string_view source, std::string_view what) {
  return Error{Errc::malformed, fmt::format("{}: corrupt ladder state: {} (fix or remove the file; "
                                            "it is not reset automatically)",
                                            source, what)};
}

Result<SystemTime> time_field(const json& object, const char* key, std::string_view source) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_string()) {
    return tl::unexpected(corrupt(source, fmt::format("\"{}\" must be a timestamp string", key)));
  }
  const auto parsed = parse_timestamp(it->get<std::string>());
  if (!parsed)
    return tl::unexpected(corrupt(source, fmt::format("\"{}\" is not a timestamp", key)));
  return *parsed;
}

Result<std::string> string_field(const json& object, const char* key, std::string_view source) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_string()) {
    return tl::unexpected(corrupt(source, fmt::format("\"{}\" must be a string", key)));
  }
  return it->get<std::string>();
}

Result<StepRecord> parse_step_record(const json& j, std::string_view source) {
  if (!j.is_object()) return tl::unexpected(corrupt(source, "a step entry is not an object"));
  StepRecord record;
  auto id = string_field(j, "step", source);
  if (!id) return tl::unexpected(id.error());
  const auto step = parse_step(*id);
  if (!step) return tl::unexpected(corrupt(source, fmt::format("unknown step \"{}\"", *id)));
  record.step = *step;
  auto at = time_field(j, "at", source);
  if (!at) return tl::unexpected(at.error());
  record.at = *at;
  auto result = string_field(j, "result", source);
  if (!result) return tl::unexpected(result.error());
  const auto parsed_result = parse_step_result(*result);
  if (!parsed_result) {
    return tl::unexpected(corrupt(source, fmt::format("unknown result \"{}\"", *result)));
  }
  record.result = *parsed_result;
  if (const auto it = j.find("forced"); it != j.end()) {
    if (!it->is_boolean())
      return tl::unexpected(corrupt(source, "\"forced\" must be true or false"));
    record.forced = it->get<bool>();
  }
  if (const auto it = j.find("note"); it != j.end()) {
    if (!it->is_string()) return tl::unexpected(corrupt(source, "\"note\" must be a string"));
    record.note = it->get<std::string>();
  }
  return record;
}

}  // namespace

std::string_view step_id(LadderStep s) {
  return info(s).id;
}
std::string_view step_name(LadderStep s) {
  return info(s).name;
}
std::string_view step_title(LadderStep s) {
  return info(s).title;
}

std::optional<LadderStep> parse_step(std::string_view text) {
  for (const auto& i : kSteps) {
    if (text == i.id || text == i.name) return i.step;
  }
  return std::nullopt;
}

std::string_view step_result_name(StepResult r) {
  return r == StepResult::ok ? "ok" : "oom";
}

std::optional<StepResult> parse_step_result(std::string_view text) {
  if (text == "ok") return StepResult::ok;
  if (text == "oom") return StepResult::oom;
  return std::nullopt;
}

bool LadderState::tried(LadderStep s) const {
  for (const auto& r : steps) {
    if (r.step == s) return true;
  }
  return false;
}

Result<LadderState> parse_ladder_state(std::string_view json_text, std::string_view source) {
  json doc;
  try {
    doc = json::parse(json_text);
  } catch (const json::parse_error& e) {
    return tl::unexpected(corrupt(source, fmt::format("not JSON (byte {})", e.byte)));
  }
  if (!doc.is_object()) return tl::unexpected(corrupt(source, "not a JSON object"));
  const auto version = doc.find("version");
  if (version == doc.end() || !version->is_number_integer()) {
    return tl::unexpected(corrupt(source, "missing \"version\""));
  }
  if (version->get<int>() != kLadderStateVersion) {
    return tl::unexpected(
        corrupt(source, fmt::format("unsupported version {}", version->get<int>())));
  }
  LadderState state;
  auto created = time_field(doc, "created", source);
  if (!created) return tl::unexpected(created.error());
  state.created = *created;
  const auto steps = doc.find("steps");
  if (steps == doc.end() || !steps->is_array()) {
    return tl::unexpected(corrupt(source, "\"steps\" must be an array"));
  }
  for (const auto& entry : *steps) {
    auto record = parse_step_record(entry, source);
    if (!record) return tl::unexpected(record.error());
    state.steps.push_back(std::move(*record));
  }
  if (const auto last = doc.find("last_oom"); last != doc.end() && !last->is_null()) {
    if (!last->is_object())
      return tl::unexpected(corrupt(source, "\"last_oom\" must be an object"));
    LastOom oom;
    auto kind = string_field(*last, "kind", source);
    if (!kind) return tl::unexpected(kind.error());
    auto phase = string_field(*last, "phase", source);
    if (!phase) return tl::unexpected(phase.error());
    auto at = time_field(*last, "at", source);
    if (!at) return tl::unexpected(at.error());
    oom.kind = std::move(*kind);
    oom.phase = std::move(*phase);
    oom.at = *at;
    state.last_oom = std::move(oom);
  }
  return state;
}

std::string serialize_ladder_state(const LadderState& state) {
  json doc = json::object();
  doc["version"] = kLadderStateVersion;
  doc["created"] = format_iso8601_utc_ms(state.created);
  json steps = json::array();
  for (const auto& r : state.steps) {
    json entry = json::object();
    entry["step"] = std::string(step_id(r.step));
    entry["name"] = std::string(step_name(r.step));
    entry["at"] = format_iso8601_utc_ms(r.at);
    entry["result"] = std::string(step_result_name(r.result));
    entry["forced"] = r.forced;
    if (!r.note.empty()) entry["note"] = r.note;
    steps.push_back(std::move(entry));
  }
  doc["steps"] = std::move(steps);
  if (state.last_oom) {
    doc["last_oom"] = json{{"kind", state.last_oom->kind},
                           {"phase", state.last_oom->phase},
                           {"at", format_iso8601_utc_ms(state.last_oom->at)}};
  } else {
    doc["last_oom"] = nullptr;
  }
  return dump_json(doc, 2) + "\n";
}

Result<LadderState> load_ladder_state(const std::filesystem::path& path) {
  auto text = read_file(path, 1024 * 1024);
  if (!text) return tl::unexpected(text.error());
  return parse_ladder_state(*text, path.string());
}

Status save_ladder_state(const std::filesystem::path& path, const LadderState& state,
                         OutputTrust trust) {
  if (path.has_parent_path()) {
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    if (ec) {
      return fail(Errc::io, fmt::format("{}: cannot create directory: {}",
                                        path.parent_path().string(), ec.message()));
    }
  }
  return write_file_atomic(path, serialize_ladder_state(state), trust);
}

}  // namespace sparkops::ladder
