#include "trainlog/sidecar.hpp"

#include "base/text.hpp"
#include "base/time_format.hpp"

namespace sparkops::trainlog {

// 2025-11-09T09:26:12.345Z	10482
std::optional<SidecarEntry> parse_sidecar_line(std::string_view line) {
  const auto tab = line.find('\t');
  if (tab == std::string_view::npos) return std::nullopt;
  const auto t = parse_timestamp(line.substr(0, tab));
  const auto off = parse_u64(line.substr(tab + 1));
  if (!t || !off) return std::nullopt;
  return SidecarEntry{*t, *off};
}

std::optional<SidecarEntry> SidecarCursor::read_entry() {
  LogLine line;
  while (reader_.next(line)) {
    auto e = parse_sidecar_line(line.text);
    if (!e) {
      ++malformed_;
      continue;
    }
    const std::optional<SidecarEntry>& last = ahead_ ? ahead_ : current_;
    if (last && e->offset < last->offset) {
      ++backwards_;
      continue;
    }
    return e;
  }
  return std::nullopt;
}

std::optional<SystemTime> SidecarCursor::time_at(std::uint64_t offset) {
  if (!started_) {
    started_ = true;
    ahead_ = read_entry();
  }
  while (ahead_ && ahead_->offset <= offset) {
    current_ = ahead_;
    ahead_ = read_entry();
  }
  if (!current_) return std::nullopt;
  return current_->time;
}

}  // namespace sparkops::trainlog
