// The workload table and the event list (internal to tui/; see frame_sections.hpp).

#include <algorithm>

#include <fmt/format.h>

#include "base/units.hpp"
#include "tui/frame_sections.hpp"

namespace sparkops::tui::detail {

namespace {

struct Columns {
  std::size_t name;
  std::size_t cap;
};

Columns columns_for(const Ctx& c) {
  // 80 columns: the fixed columns take 58, the name 10, the cap state 8 (total 78).
  if (!c.wide()) return {10, 8};
  const std::size_t extra = c.columns - 80;
  return {10 + std::min<std::size_t>(extra / 3, 22), 8 + std::min<std::size_t>(extra / 2, 28)};
}

std::string opt_gib(const std::optional<std::uint64_t>& b) {
  return b ? gib(*b) : "-";
}

std::string state_text(const status::WorkloadLine& w) {
  if (w.orphan) return "orphan";
  return w.heavy ? "heavy" : "-";
}

}  // namespace

std::size_t workload_row_count(const Ctx& c) {
  const auto& w = c.model.report.workloads;
  return w && !w->empty() ? w->size() : 1;
}

void workloads(const Ctx& c, std::size_t rows, Frame& out) {
  const status::StatusReport& r = c.model.report;
  const Columns col = columns_for(c);
  Line head;
  head.add("WORKLOADS", Style::heading)
      .add(fmt::format("  sort: {}", sort_key_name(c.view.sort)), Style::dim);
  if (r.workloads) head.add(fmt::format("  {} running", r.workloads->size()), Style::dim);
  out.push_back(std::move(head));
  out.push_back(Line().add(fmt::format(" {:>7} {:<7} {} {} {:>6} {:>6} {:>6} {:>6} {:<6} {:>6}",
                                       "PID", "KIND", pad("NAME", col.name), pad("CAP", col.cap),
                                       "CLAIM", "RSS", "PSS", "GPU", "STATE", "AGE"),
                           Style::dim));
  if (!r.workloads) {
    out.push_back(Line().add("  not scanned (see notes of `sparkops status`)", Style::dim));
    return;
  }
  const auto sorted = sorted_workloads(r, c.view.sort);
  if (sorted.empty()) {
    out.push_back(Line().add("  no inference server or trainer running", Style::dim));
  } else {
    const std::size_t selected = std::min(c.view.selected, sorted.size() - 1);
    const std::size_t shown = std::max<std::size_t>(rows, 1);
    const std::size_t first = selected >= shown ? selected - shown + 1 : 0;
    for (std::size_t i = first; i < sorted.size() && i < first + shown; ++i) {
      const status::WorkloadLine& w = *sorted[i];
      const std::string cap =
          c.wide() && !w.cap_text.empty() ? fmt::format("{} ({})", w.cap, w.cap_text) : w.cap;
      const std::string text = fmt::format(
          "{}{:>7} {:<7} {} {} {:>6} {:>6} {:>6} {:>6} {:<6} {:>6}", i == selected ? ">" : " ",
          w.pid, cut_to_width(printable(w.kind), 7), pad(printable(w.name), col.name),
          pad(printable(cap), col.cap), opt_gib(w.claim_bytes), gib(w.rss_bytes), gib(w.pss_bytes),
          gib(w.gpu_bytes), state_text(w), w.age ? format_duration(*w.age) : std::string("-"));
      const Style style = i == selected ? Style::selected
                          : w.orphan    ? Style::bad
                          : w.heavy     ? Style::warn
                                        : Style::plain;
      out.push_back(Line().add(text, style));
    }
  }
  if (!r.coexistence.empty()) {
    out.push_back(Line().add("  " + printable(r.coexistence),
                             r.coexistence_stop_first ? Style::bad : Style::ok));
  }
}

void events(const Ctx& c, std::size_t rows, Frame& out) {
  const auto& ev = c.model.events;
  out.push_back(Line().add("EVENTS", Style::heading).add("  newest last", Style::dim));
  if (rows == 0) return;
  if (ev.empty()) {
    out.push_back(
        Line().add("  none: no throttling, pressure or workload change seen", Style::dim));
    return;
  }
  // The newest `rows` events, oldest first (a log that scrolls up).
  const std::size_t first = ev.size() > rows ? ev.size() - rows : 0;
  for (std::size_t i = first; i < ev.size(); ++i) {
    const EventLine& e = ev[i];
    const Style style = e.severity == EventSeverity::alert     ? Style::bad
                        : e.severity == EventSeverity::warning ? Style::warn
                                                               : Style::plain;
    out.push_back(Line().add("  " + clock_time(e.time) + "  ", Style::dim).add(e.text, style));
  }
}

}  // namespace sparkops::tui::detail
