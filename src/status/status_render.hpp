#pragma once
// The one-screen `sparkops status` table. Pure: the same report renders the same bytes.

#include <string>

#include "status/status_report.hpp"

namespace sparkops {

std::string render_status(const StatusReport& report);

}  // namespace sparkops
