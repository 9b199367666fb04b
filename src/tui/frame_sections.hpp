#pragma once
// The sections build_frame stacks (internal to tui/). Each appends its lines to `out`, at most
// `columns` wide once fitted; styles follow the model's thresholds.

#include <cstddef>
#include <string>

#include "tui/frame.hpp"
#include "tui/top_model.hpp"

namespace sparkops::tui::detail {

struct Ctx {
  const TopModel& model;
  const ViewState& view;
  std::size_t columns;
  Glyphs glyphs;
  bool wide() const { return columns >= 120; }
  std::string degrees() const { return glyphs == Glyphs::unicode ? "°C" : "C"; }
};

void header(const Ctx& c, Frame& out);
void pool(const Ctx& c, Frame& out);
// `compact`: two lines per GPU (figures, reasons/counters) instead of four.
void gpus(const Ctx& c, bool compact, Frame& out);
std::size_t gpu_lines(const Ctx& c, bool compact);
void host(const Ctx& c, Frame& out);
void pressure(const Ctx& c, Frame& out);
// The table shows `rows` workload rows (scrolled so the selected one is visible).
void workloads(const Ctx& c, std::size_t rows, Frame& out);
std::size_t workload_row_count(const Ctx& c);  // rows the table would like (>= 1)
void events(const Ctx& c, std::size_t rows, Frame& out);
void help(const Ctx& c, std::size_t rows, Frame& out);
void footer(const Ctx& c, Frame& out);

// Shared formatting.
std::string gib(std::uint64_t bytes);            // "119.7"
std::string clock_time(SystemTime t);            // "09:26:12"
std::string pad(std::string s, std::size_t w);   // left-aligned in w columns (cut when longer)
std::string rpad(std::string s, std::size_t w);  // right-aligned

}  // namespace sparkops::tui::detail
