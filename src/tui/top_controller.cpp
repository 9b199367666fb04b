#include "tui/top_controller.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace sparkops::tui {

TopController::TopController(ViewState initial, ProcessSignaller& signaller)
    : view_(std::move(initial)), signaller_(signaller) {}

Command TopController::on_input(const Input& input, const TopModel& model) {
  if (input.kind == Input::Kind::resize) return Command::redraw;
  if (view_.confirm_pid) {
    return confirm(input.kind == Input::Kind::character ? input.ch : '\0');
  }
  view_.message.clear();
  const std::size_t rows = sorted_workloads(model.report, view_.sort).size();
  switch (input.kind) {
    case Input::Kind::up:
      if (view_.selected > 0) --view_.selected;
      return Command::redraw;
    case Input::Kind::down:
      if (view_.selected + 1 < rows) ++view_.selected;
      return Command::redraw;
    case Input::Kind::character:
      return on_character(input.ch, model);
    case Input::Kind::resize:
      break;
  }
  return Command::redraw;
}

Command TopController::on_character(char ch, const TopModel& model) {
  if (ch == 'q' || ch == 'Q') return Command::quit;
  if (view_.help) {
    view_.help = false;
    return Command::redraw;
  }
  switch (ch) {
    case '?':
    case 'h':
      view_.help = true;
      return Command::redraw;
    case 'm':
      view_.sort = SortKey::memory;
      view_.selected = 0;
      return Command::redraw;
    case 'c':
      view_.sort = SortKey::cap;
      view_.selected = 0;
      return Command::redraw;
    case 'a':
      view_.sort = SortKey::age;
      view_.selected = 0;
      return Command::redraw;
    case 'f':
      view_.frozen = !view_.frozen;
      return view_.frozen ? Command::redraw : Command::refresh_now;
    case '+':
    case '=': {
      const auto it =
          std::upper_bound(kIntervalSteps.begin(), kIntervalSteps.end(), view_.interval);
      if (it != kIntervalSteps.end()) view_.interval = *it;
      return Command::redraw;
    }
    case '-':
    case '_': {
      const auto it =
          std::lower_bound(kIntervalSteps.begin(), kIntervalSteps.end(), view_.interval);
      if (it != kIntervalSteps.begin()) view_.interval = *(it - 1);
      return Command::redraw;
    }
    case 'k': {
      const auto rows = sorted_workloads(model.report, view_.sort);
      if (rows.empty()) {
        view_.message = "no workload to signal";
        return Command::redraw;
      }
      const status::WorkloadLine& w = *rows[std::min(view_.selected, rows.size() - 1)];
      if (auto why = signaller_.refusal(w); !why.empty()) {
        view_.message = std::move(why);
        return Command::redraw;
      }
      target_ = w;
      view_.confirm_pid = w.pid;
      return Command::redraw;
    }
    default:
      return Command::none;
  }
}

Command TopController::confirm(char ch) {
  view_.confirm_pid.reset();
  if ((ch == 'y' || ch == 'Y') && target_) {
    view_.message = signaller_.terminate(*target_);
  } else if (target_) {
    view_.message = fmt::format("not sent: SIGTERM to PID {} cancelled", target_->pid);
  }
  target_.reset();
  return Command::redraw;
}

}  // namespace sparkops::tui
