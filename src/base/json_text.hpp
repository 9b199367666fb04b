#pragma once
// Every JSON document sparkops writes is serialised here, so text from the machine that is not
// UTF-8 (a process name, a sensor name, a path) is replaced by the rule in base/utf8.hpp instead
// of making nlohmann::json throw type_error 316 (which killed commands with exit 70 and `serve`
// with std::terminate). Works for nlohmann::json and nlohmann::ordered_json.

#include <string>

#include <nlohmann/json.hpp>

namespace sparkops {

// indent < 0: compact; otherwise pretty with `indent` spaces. Non-ASCII stays raw UTF-8.
template <class Json>
std::string dump_json(const Json& doc, int indent = -1) {
  return doc.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace sparkops
