#pragma once
// Effective configuration: built-in defaults, then /etc/sparkops/config.toml, then the user's
// ($XDG_CONFIG_HOME or ~/.config)/sparkops/config.toml, then the file named by SPARKOPS_CONFIG;
// later layers win, and command-line flags win over all of them. Every value remembers its source
// so `sparkops config` can show where it came from.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"

namespace sparkops::config {

struct ConfigKey {
  std::string_view name;           // dotted: "thermal.ceiling_watts"
  std::string_view default_value;  // as text
  std::string_view
      kind;  // "bytes" | "duration" | "number" | "integer" | "bool" | "string" | "path"
  std::string_view help;
};

// The table of every key sparkops understands, with the skill's defaults.
const std::vector<ConfigKey>& config_keys();

struct ConfigSetting {
  std::string value;
  std::string source;  // "default", a file path, or "flag"
};

class Config {
 public:
  // Defaults only.
  Config();

  // Applies one TOML document. Unknown keys and wrongly typed values are errors naming the file
  // and the key (a typo in a config file must not silently fall back to a default).
  Status apply_toml(std::string_view toml_text, std::string_view source);

  // Sets a value from a flag (source "flag"), checked as a file value is (kind and range); the
  // error names `flag` ("--slowdown-factor") or, when empty, the key. The key must exist.
  [[nodiscard]] Status set_from_flag(std::string_view key, std::string value,
                                     std::string_view flag = {});

  const std::map<std::string, ConfigSetting, std::less<>>& settings() const { return settings_; }
  const ConfigSetting& setting(std::string_view key) const;

  std::string get_string(std::string_view key) const;
  double get_number(std::string_view key) const;
  std::int64_t get_integer(std::string_view key) const;
  bool get_bool(std::string_view key) const;
  std::uint64_t get_bytes(std::string_view key) const;  // bare number = GiB
  std::chrono::nanoseconds get_duration(std::string_view key) const;

 private:
  std::map<std::string, ConfigSetting, std::less<>> settings_;
};

// Where the layers come from; tests pass their own values instead of the process environment.
struct ConfigPaths {
  std::string system_file = "/etc/sparkops/config.toml";
  std::string user_file;      // empty: none
  std::string explicit_file;  // SPARKOPS_CONFIG; empty: none. Must exist when set.
};
ConfigPaths config_paths_from_environment();

// Loads every layer that exists. Missing system/user files are skipped; a missing SPARKOPS_CONFIG
// file, unreadable or malformed file is an Error.
Result<Config> load_config(const ConfigPaths& paths);
// Every layer that loads, in order; a layer that does not (missing SPARKOPS_CONFIG, unreadable,
// malformed, unknown key or bad value) is left out whole and its error appended to `problems`.
// `sparkops config` uses it to show the values in effect beside the bad key.
Config load_config_layers(const ConfigPaths& paths, std::vector<Error>& problems);

}  // namespace sparkops::config
