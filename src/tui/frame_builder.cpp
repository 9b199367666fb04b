#include "tui/frame_builder.hpp"

#include <algorithm>

#include "tui/frame_sections.hpp"

namespace sparkops::tui {

namespace {

// Rows the workload table and the event list share, split so both stay useful: each gets what it
// wants when that fits; otherwise events keep at least a third (and two rows), the table the rest.
std::pair<std::size_t, std::size_t> split_rows(std::size_t available, std::size_t want_table,
                                               std::size_t want_events) {
  if (want_table + want_events <= available) return {want_table, want_events};
  const std::size_t events_floor = std::min(want_events, std::max<std::size_t>(2, available / 3));
  const std::size_t table =
      std::min(want_table, available > events_floor ? available - events_floor : 1);
  const std::size_t events = std::min(want_events, available > table ? available - table : 0);
  return {table, events};
}

}  // namespace

Frame build_frame(const TopModel& model, const ViewState& view, const FrameOptions& options) {
  const detail::Ctx c{model, view, options.columns, options.glyphs};
  const bool interactive = options.mode == FrameMode::interactive;
  const std::size_t rows = options.rows;
  Frame out;
  detail::header(c, out);

  if (view.help && interactive) {
    detail::help(c, rows > 2 ? rows - 2 : 0, out);
  } else {
    // Fixed part: pool (3), GPU blocks, host (1), pressure (1), table header (2), verdict (1),
    // events header (1), and the key line.
    const std::size_t verdict = model.report.coexistence.empty() ? 0 : 1;
    auto fixed = [&](bool compact) {
      return 1 + 3 + detail::gpu_lines(c, compact) + 2 + 2 + verdict + 1 + (interactive ? 1 : 0);
    };
    // Four lines per GPU while the table and events keep at least four rows together.
    const bool compact = fixed(false) + 4 > rows;
    const std::size_t used = fixed(compact);
    const std::size_t left = rows > used ? rows - used : 0;
    const auto [table_rows, event_rows] = split_rows(left, detail::workload_row_count(c),
                                                     std::max<std::size_t>(model.events.size(), 1));

    detail::pool(c, out);
    detail::gpus(c, compact, out);
    detail::host(c, out);
    detail::pressure(c, out);
    detail::workloads(c, table_rows, out);
    detail::events(c, event_rows, out);
  }

  if (interactive) {
    if (out.size() + 1 > rows) out.resize(rows > 0 ? rows - 1 : 0);
    while (out.size() + 1 < rows) out.emplace_back();
    detail::footer(c, out);
  }
  fit(out, options.columns, rows);
  return out;
}

}  // namespace sparkops::tui
