#pragma once
// build_frame: TopModel + ViewState -> the lines of one screen. Pure and deterministic (the time
// shown is the report's), pinned by goldens at 80x24 and 160x48.
//
// Layout, top to bottom: header; POOL (figures, a bar of used / reclaimable / free now, history);
// one block per GPU (figures, reasons and counter deltas, open episodes and the platform-cap
// signature, sparklines); HOST thermals; PRESSURE since start; WORKLOADS (table, the one-heavy-job
// verdict); EVENTS; and, interactively, a key line or prompt at the bottom. Every line fits
// `columns`; the frame has at most `rows` lines. Larger terminals get longer sparklines, wider
// name and cap columns, the spbm rails, and more workload and event rows.

#include <cstddef>

#include "tui/frame.hpp"
#include "tui/top_model.hpp"

namespace sparkops::tui {

enum class FrameMode { interactive, once };

struct FrameOptions {
  std::size_t columns = 80;
  std::size_t rows = 24;
  Glyphs glyphs = Glyphs::unicode;
  FrameMode mode = FrameMode::interactive;  // once: no key line, no padding
};

// Smallest terminal the layout is designed for; smaller ones get what fits.
inline constexpr std::size_t kMinColumns = 80;
inline constexpr std::size_t kMinRows = 24;

Frame build_frame(const TopModel& model, const ViewState& view, const FrameOptions& options);

}  // namespace sparkops::tui
