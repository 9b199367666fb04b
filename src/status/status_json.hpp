#pragma once
// The `status --json` / `/api/status` document. Every byte figure is in bytes, temperatures in
// degrees Celsius, power in watts, times in seconds; absent figures are null (never 0).

#include <nlohmann/json.hpp>

#include "status/status_report.hpp"

namespace sparkops::status {

nlohmann::ordered_json status_to_json(const StatusReport& report);

}  // namespace sparkops::status
