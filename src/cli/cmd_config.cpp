#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/json_text.hpp"
#include "cli/commands.hpp"

namespace sparkops::cli {

void add_config_command(CLI::App& app, AppContext& ctx) {
  auto* cmd = app.add_subcommand("config",
                                 "Show every configuration value in effect and where it came from");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print JSON");
  cmd->callback([&ctx, json] {
    if (*json) {
      nlohmann::ordered_json doc = nlohmann::ordered_json::object();
      for (const auto& key : config_keys()) {
        const auto& s = ctx.config.setting(key.name);
        doc[std::string(key.name)] = {{"value", s.value}, {"source", s.source}, {"help", key.help}};
      }
      fmt::print(ctx.out, "{}\n", dump_json(doc, 2));
      return;
    }
    std::size_t width = 0;
    for (const auto& key : config_keys()) width = std::max(width, key.name.size());
    for (const auto& key : config_keys()) {
      const auto& s = ctx.config.setting(key.name);
      fmt::print(ctx.out, "{:<{}}  {:<8}  ({})\n", key.name, width, s.value, s.source);
    }
    fmt::print(ctx.out,
               "\nFiles, later wins: /etc/sparkops/config.toml, ~/.config/sparkops/config.toml, "
               "$SPARKOPS_CONFIG; flags win over all.\n");
  });
}

}  // namespace sparkops::cli
