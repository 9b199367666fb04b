#include "config/config.hpp"

#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "base/file_io.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "config/config_bounds.hpp"

namespace sparkops::config {

namespace {

const ConfigKey* find_key(std::string_view name) {
  for (const auto& k : config_keys()) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

// The value of a numeric key in the unit its bounds use (bytes, seconds, the number itself).
std::optional<double> numeric_value(const ConfigKey& key, const std::string& value) {
  if (key.kind == "bytes") {
    const auto v = parse_bytes(value, DefaultUnit::gib);
    return v ? std::optional<double>(static_cast<double>(*v)) : std::nullopt;
  }
  if (key.kind == "duration") {
    const auto v = parse_duration(value);
    return v ? std::optional<double>(std::chrono::duration<double>(*v).count()) : std::nullopt;
  }
  if (key.kind == "number") return parse_double(value);
  if (key.kind == "integer") {
    const auto v = parse_i64(value);
    return v ? std::optional<double>(static_cast<double>(*v)) : std::nullopt;
  }
  return std::nullopt;
}

std::string bound_text(const ConfigKey& key, double v) {
  if (key.kind == "bytes") return format_bytes(static_cast<std::uint64_t>(v));
  if (key.kind == "duration") return fmt::format("{}s", v);
  return fmt::format("{}", v);
}

// Validates `value` against the key's kind and range; returns an error message or empty.
std::string validate(const ConfigKey& key, const std::string& value) {
  if (key.kind == "bytes") {
    if (!parse_bytes(value, DefaultUnit::gib)) return "expected a size such as 4GiB";
  } else if (key.kind == "duration") {
    if (!parse_duration(value)) return "expected a duration such as 30s";
  } else if (key.kind == "number") {
    const auto v = parse_double(value);
    if (!v || !std::isfinite(*v)) return "expected a finite number";
  } else if (key.kind == "integer") {
    if (!parse_i64(value)) return "expected an integer";
  } else if (key.kind == "bool") {
    if (value != "true" && value != "false") return "expected true or false";
  }
  const ConfigBounds* b = config_bounds(key.name);
  if (b == nullptr) return {};
  const auto v = numeric_value(key, value);
  if (!v) return {};
  const bool low = b->min_exclusive ? *v <= b->min : *v < b->min;
  if (low || *v > b->max) {
    return b->min_exclusive ? fmt::format("expected above {} and at most {} ({})",
                                          bound_text(key, b->min), bound_text(key, b->max), b->why)
                            : fmt::format("expected {} to {} ({})", bound_text(key, b->min),
                                          bound_text(key, b->max), b->why);
  }
  return {};
}

std::optional<std::string> node_to_text(const toml::node& node) {
  if (auto s = node.value<std::string>()) return *s;
  if (node.is_boolean()) return *node.value<bool>() ? "true" : "false";
  if (node.is_integer()) return fmt::format("{}", *node.value<std::int64_t>());
  if (node.is_floating_point()) return fmt::format("{}", *node.value<double>());
  return std::nullopt;
}

Status walk(const toml::table& table, const std::string& prefix,
            std::map<std::string, ConfigSetting, std::less<>>& out, std::string_view source) {
  for (const auto& [k, node] : table) {
    const std::string name =
        prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
    if (const auto* sub = node.as_table()) {
      if (auto st = walk(*sub, name, out, source); !st) return st;
      continue;
    }
    const ConfigKey* key = find_key(name);
    if (key == nullptr) {
      return fail(
          Errc::invalid_argument,
          fmt::format("{}: unknown key '{}' (see `sparkops config` for the keys)", source, name));
    }
    const auto text = node_to_text(node);
    if (!text) {
      return fail(Errc::invalid_argument,
                  fmt::format("{}: key '{}' must be a value", source, name));
    }
    if (const std::string why = validate(*key, *text); !why.empty()) {
      return fail(Errc::invalid_argument, fmt::format("{}: key '{}' = {}: {}", source, name,
                                                      quote_for_message(*text), why));
    }
    out[name] = ConfigSetting{*text, std::string(source)};
  }
  return {};
}

}  // namespace

Config::Config() {
  for (const auto& k : config_keys()) {
    settings_[std::string(k.name)] = ConfigSetting{std::string(k.default_value), "default"};
  }
}

Status Config::apply_toml(std::string_view toml_text, std::string_view source) {
  // Debian builds toml++ with exceptions enabled: parse errors arrive as toml::parse_error.
  toml::table parsed;
  try {
    parsed = toml::parse(toml_text, source);
  } catch (const toml::parse_error& err) {
    return fail(Errc::malformed, fmt::format("{}:{}: {}", source, err.source().begin.line,
                                             std::string(err.description())));
  }
  auto copy = settings_;
  if (auto st = walk(parsed, "", copy, source); !st) return st;
  settings_ = std::move(copy);
  return {};
}

Status Config::set_from_flag(std::string_view key, std::string value, std::string_view flag) {
  const auto it = settings_.find(key);
  if (it == settings_.end()) throw std::logic_error(fmt::format("unknown config key {}", key));
  if (const ConfigKey* k = find_key(key)) {
    if (const std::string why = validate(*k, value); !why.empty()) {
      return fail(Errc::invalid_argument, fmt::format("{} {}: {}", flag.empty() ? key : flag,
                                                      quote_for_message(value), why));
    }
  }
  it->second = ConfigSetting{std::move(value), "flag"};
  return {};
}

const ConfigSetting& Config::setting(std::string_view key) const {
  const auto it = settings_.find(key);
  if (it == settings_.end()) throw std::logic_error(fmt::format("unknown config key {}", key));
  return it->second;
}

std::string Config::get_string(std::string_view key) const {
  return setting(key).value;
}

// The getters below parse values that were validated when set; a failure here is a bug.
double Config::get_number(std::string_view key) const {
  const auto v = parse_double(setting(key).value);
  if (!v) throw std::logic_error(fmt::format("config {} is not a number", key));
  return *v;
}

std::int64_t Config::get_integer(std::string_view key) const {
  const auto v = parse_i64(setting(key).value);
  if (!v) throw std::logic_error(fmt::format("config {} is not an integer", key));
  return *v;
}

bool Config::get_bool(std::string_view key) const {
  return setting(key).value == "true";
}

std::uint64_t Config::get_bytes(std::string_view key) const {
  const auto v = parse_bytes(setting(key).value, DefaultUnit::gib);
  if (!v) throw std::logic_error(v.error().detail);
  return *v;
}

std::chrono::nanoseconds Config::get_duration(std::string_view key) const {
  const auto v = parse_duration(setting(key).value);
  if (!v) throw std::logic_error(v.error().detail);
  return *v;
}

ConfigPaths config_paths_from_environment() {
  ConfigPaths paths;
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg != nullptr && *xdg != '\0') {
    paths.user_file = std::string(xdg) + "/sparkops/config.toml";
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    paths.user_file = std::string(home) + "/.config/sparkops/config.toml";
  }
  if (const char* explicit_file = std::getenv("SPARKOPS_CONFIG"); explicit_file != nullptr) {
    paths.explicit_file = explicit_file;
  }
  return paths;
}

Config load_config_layers(const ConfigPaths& paths, std::vector<Error>& problems) {
  Config config;
  const auto layer = [&](const std::string& path, bool required) {
    if (path.empty()) return;
    auto text = read_file(path, 1024 * 1024);
    if (!text) {
      if (!required && text.error().code == Errc::not_found) return;
      problems.push_back(text.error());
      return;
    }
    // apply_toml leaves the configuration unchanged when the document has any error.
    if (auto st = config.apply_toml(*text, path); !st) problems.push_back(st.error());
  };
  layer(paths.system_file, false);
  layer(paths.user_file, false);
  layer(paths.explicit_file, true);
  return config;
}

Result<Config> load_config(const ConfigPaths& paths) {
  std::vector<Error> problems;
  Config config = load_config_layers(paths, problems);
  if (!problems.empty()) return tl::unexpected(problems.front());
  return config;
}

}  // namespace sparkops::config
