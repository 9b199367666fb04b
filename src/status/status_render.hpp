#pragma once
// The one-screen `sparkops status` table. Pure: the same report renders the same bytes.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "status/status_report.hpp"

namespace sparkops::status {

// width: the terminal's columns (the workloads table fits it; term/terminal.hpp decides), nullopt
// for natural widths.
// The "!" lines the table shows (a flush would help, PROCHOT asserted), without the "! ": status
// --json carries them in `notes` beside the report's own notes.
std::vector<std::string> status_warnings(const StatusReport& report);

std::string render_status(const StatusReport& report,
                          std::optional<std::size_t> width = std::nullopt);

}  // namespace sparkops::status
