#pragma once
// TopController: what each key does to the view (pure apart from the ProcessSignaller it is
// given, which tests fake). Keys: q quit; ? help (any key closes it); m/c/a sort by memory, cap,
// age; Up/Down select a workload; f freeze/resume; + / - step the refresh interval along
// kIntervalSteps; k asks to SIGTERM the selected workload, y confirms, anything else cancels.

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>

#include "tui/signaller.hpp"
#include "tui/top_model.hpp"

namespace sparkops::tui {

struct Input {
  enum class Kind { character, up, down, resize };
  Kind kind = Kind::character;
  char ch = 0;
};

enum class Command {
  none,         // nothing to redraw
  redraw,       // the view changed: draw the last model again
  refresh_now,  // collect now (resumed from freeze)
  quit,
};

inline constexpr std::array<std::chrono::milliseconds, 9> kIntervalSteps = {
    std::chrono::milliseconds{250},   std::chrono::milliseconds{500},
    std::chrono::milliseconds{1000},  std::chrono::milliseconds{2000},
    std::chrono::milliseconds{3000},  std::chrono::milliseconds{5000},
    std::chrono::milliseconds{10000}, std::chrono::milliseconds{30000},
    std::chrono::milliseconds{60000}};

class TopController {
 public:
  TopController(ViewState initial, ProcessSignaller& signaller);
  Command on_input(const Input& input, const TopModel& model);
  const ViewState& view() const { return view_; }

 private:
  Command on_character(char ch, const TopModel& model);
  Command confirm(char ch);

  ViewState view_;
  ProcessSignaller& signaller_;
  std::optional<status::WorkloadLine> target_;  // the workload `k` chose, kept across refreshes
};

}  // namespace sparkops::tui
