#pragma once
// `sparkops config`'s answer: every key in effect, its value and where it came from, as a JSON
// document (docs/json.md "config") and as text. A file that did not load is listed as a problem
// and as a note; its values are not among the ones shown.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.hpp"
#include "config/config.hpp"

namespace sparkops::config {

// The one text for a config file that did not load: the stderr line and the JSON note.
std::string config_not_applied(const std::string& detail);

// {"keys": {NAME: {value, text, kind, source, help}}, "problems": [...], "notes": [...]}; `value`
// is typed by the key's kind (sizes in bytes, durations in seconds), `text` is what was written.
nlohmann::ordered_json config_document(const Config& config, const std::vector<Error>& problems);

// One line per key (name, value, source) and the files' order of precedence.
std::string render_config_text(const Config& config);

}  // namespace sparkops::config
