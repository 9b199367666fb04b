#include "config/config_report.hpp"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

namespace sparkops::config {
namespace {

// The value as its kind says (docs/json.md): numbers and integers as numbers, bools as bools,
// sizes in bytes, durations in seconds; strings and paths as text.
nlohmann::ordered_json typed_value(const Config& config, const ConfigKey& key) {
  const std::string name(key.name);
  if (key.kind == "number") return config.get_number(name);
  if (key.kind == "integer") return config.get_integer(name);
  if (key.kind == "bool") return config.get_bool(name);
  if (key.kind == "bytes") return config.get_bytes(name);
  if (key.kind == "duration") {
    return std::chrono::duration<double>(config.get_duration(name)).count();
  }
  return config.get_string(name);
}

}  // namespace

std::string config_not_applied(const std::string& detail) {
  return fmt::format("{} (file not applied)", detail);
}

nlohmann::ordered_json config_document(const Config& config, const std::vector<Error>& problems) {
  nlohmann::ordered_json doc = nlohmann::ordered_json::object();
  nlohmann::ordered_json keys = nlohmann::ordered_json::object();
  for (const auto& key : config_keys()) {
    const auto& s = config.setting(key.name);
    keys[std::string(key.name)] = {{"value", typed_value(config, key)},
                                   {"text", s.value},
                                   {"kind", key.kind},
                                   {"source", s.source},
                                   {"help", key.help}};
  }
  doc["keys"] = std::move(keys);
  nlohmann::ordered_json listed = nlohmann::ordered_json::array();
  for (const auto& p : problems) listed.push_back(p.detail);
  doc["problems"] = std::move(listed);
  // The warnings the text prints on stderr, as the other commands' `notes`.
  nlohmann::ordered_json notes = nlohmann::ordered_json::array();
  for (const auto& p : problems) notes.push_back(config_not_applied(p.detail));
  doc["notes"] = std::move(notes);
  return doc;
}

std::string render_config_text(const Config& config) {
  std::size_t width = 0;
  for (const auto& key : config_keys()) width = std::max(width, key.name.size());
  std::string text;
  for (const auto& key : config_keys()) {
    const auto& s = config.setting(key.name);
    text += fmt::format("{:<{}}  {:<8}  ({})\n", key.name, width, s.value, s.source);
  }
  text +=
      "\nFiles, later wins: /etc/sparkops/config.toml, ~/.config/sparkops/config.toml, "
      "$SPARKOPS_CONFIG, --config FILE; flags win over all.\n";
  return text;
}

}  // namespace sparkops::config
