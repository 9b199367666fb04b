#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/json_text.hpp"
#include "cli/commands.hpp"

namespace sparkops::cli {
namespace {

// The value as its kind says (docs/json.md): numbers and integers as numbers, bools as bools,
// sizes in bytes, durations in seconds; strings and paths as text. `text` keeps what was written.
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

// One text for a config file that did not load: the stderr line and the JSON note.
std::string not_applied(const std::string& detail) {
  return fmt::format("{} (file not applied)", detail);
}

}  // namespace

void add_config_command(CommandTree& tree, AppContext& ctx) {
  auto* cmd = tree.add("config",
                       "Show every configuration value in effect and where it came from "
                       "(a bad file is shown beside the values, exit 2)");
  if (cmd == nullptr) return;
  cmd->callback([&ctx] {
    if (ctx.json) {
      nlohmann::ordered_json doc = nlohmann::ordered_json::object();
      nlohmann::ordered_json keys = nlohmann::ordered_json::object();
      for (const auto& key : config_keys()) {
        const auto& s = ctx.config.setting(key.name);
        keys[std::string(key.name)] = {{"value", typed_value(ctx.config, key)},
                                       {"text", s.value},
                                       {"kind", key.kind},
                                       {"source", s.source},
                                       {"help", key.help}};
      }
      doc["keys"] = std::move(keys);
      nlohmann::ordered_json problems = nlohmann::ordered_json::array();
      for (const auto& p : ctx.config_problems) problems.push_back(p.detail);
      doc["problems"] = std::move(problems);
      // The warnings the text prints on stderr, as the other commands' `notes`.
      nlohmann::ordered_json notes = nlohmann::ordered_json::array();
      for (const auto& p : ctx.config_problems) notes.push_back(not_applied(p.detail));
      doc["notes"] = std::move(notes);
      fmt::print(ctx.out, "{}\n", dump_document(doc));
    } else {
      std::size_t width = 0;
      for (const auto& key : config_keys()) width = std::max(width, key.name.size());
      for (const auto& key : config_keys()) {
        const auto& s = ctx.config.setting(key.name);
        fmt::print(ctx.out, "{:<{}}  {:<8}  ({})\n", key.name, width, s.value, s.source);
      }
      fmt::print(ctx.out,
                 "\nFiles, later wins: /etc/sparkops/config.toml, ~/.config/sparkops/config.toml, "
                 "$SPARKOPS_CONFIG, --config FILE; flags win over all.\n");
    }
    // A file that did not load is left out whole (the values above do not include it); every
    // other command refuses to run until it is fixed.
    for (const auto& p : ctx.config_problems) {
      print_error(ctx, not_applied(p.detail));
    }
    if (!ctx.config_problems.empty()) ctx.exit_code = kExitBadInput;
  });
}

}  // namespace sparkops::cli
