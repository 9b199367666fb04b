#include "trainlog/format_parser.hpp"

#include <string>
#include <utility>

#include "base/text.hpp"
#include "trainlog/log_text.hpp"
#include "trainlog/markers.hpp"

namespace sparkops::trainlog {

bool date_record(const ParseContext& ctx, const LogLine& line, bool printed, StepRecord& record,
                 SeriesBuilder& out) {
  if (ctx.sidecar && line.stamped) {
    record.time = line.stamped;
    out.series().time_basis = TimeBasis::sidecar;
    return true;
  }
  if (!printed) return false;
  const auto ts = leading_timestamp(line.text);
  if (!ts) return false;
  record.time = *ts;
  out.series().time_basis = TimeBasis::log_timestamps;
  return true;
}

void add_line_marker(std::string_view text, SeriesBuilder& out, std::optional<SystemTime> time) {
  const auto kind = detect_marker(text);
  if (!kind) return;
  Marker m;
  m.kind = *kind;
  m.detail = std::string(trim(text));
  m.time = time;
  out.add_marker(std::move(m));
}

}  // namespace sparkops::trainlog
