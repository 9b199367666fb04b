#pragma once
// The full replay as it stood before the fast path, kept as the reference the fast path's figures
// are compared with (replay_fast_path_test.cpp).
#include <vector>

#include "plan/step_replay.hpp"

namespace sparkops::plan::reference {

ReplayResult replay_training(const ReplayModel& model, const std::vector<StepShape>& steps,
                             const AllocatorConfig& config = {});

}  // namespace sparkops::plan::reference
