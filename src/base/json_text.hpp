#pragma once
// Every JSON document sparkops writes is serialised here, so text from the machine that is not
// UTF-8 (a process name, a sensor name, a path) is replaced by the rule in base/utf8.hpp instead
// of making nlohmann::json throw type_error 316 (which killed commands with exit 70 and `serve`
// with std::terminate). Works for nlohmann::json and nlohmann::ordered_json.

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace sparkops {

// indent < 0: compact; otherwise pretty with `indent` spaces. Non-ASCII stays raw UTF-8.
template <class Json>
std::string dump_json(const Json& doc, int indent = -1) {
  return doc.dump(indent, ' ', false, Json::error_handler_t::replace);
}

// An optional value as JSON: the value, or null when it is absent (every document spells "not
// known" as null, never as a missing key or 0). Json is nlohmann::json or nlohmann::ordered_json.
template <class Json = nlohmann::json, class T>
Json json_or_null(const std::optional<T>& v) {
  return v ? Json(*v) : Json(nullptr);
}

}  // namespace sparkops

namespace sparkops {

// The version of the JSON documents' shapes (docs/json.md). Bumped when a field is removed,
// renamed or changes type; adding a field does not bump it.
inline constexpr int kJsonSchemaVersion = 1;

namespace json_detail {

// Floating-point numbers rounded to 12 significant digits: the binary noise of a computation
// (3.4999999999999996, 0.30000000000000004) does not reach a reader; integers are untouched.
template <class Json>
void round_numbers(Json& j) {
  if (j.is_number_float()) {
    const double v = j.template get<double>();
    if (v == v && v - v == 0) {  // finite: NaN and infinities are left to the dumper (null)
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.12g", v);
      j = std::strtod(buf, nullptr);
    }
    return;
  }
  if (j.is_array() || j.is_object()) {
    for (auto& item : j) round_numbers(item);
  }
}

}  // namespace json_detail

// Every document a command prints or writes passes here: "schema_version" first, numbers rounded
// as above, then dump_json. Pretty with `indent` spaces, ends without a newline.
template <class Json>
std::string dump_document(Json doc, int indent = 2) {
  json_detail::round_numbers(doc);
  if (!doc.is_object()) return dump_json(doc, indent);
  Json out = Json::object();
  out["schema_version"] = kJsonSchemaVersion;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    if (it.key() != "schema_version") out[it.key()] = std::move(it.value());
  }
  return dump_json(out, indent);
}

}  // namespace sparkops
