#pragma once
// Cause attribution for one slowdown window against the samples of a baseline window.

#include <optional>

#include "diagnose/diagnosis.hpp"

namespace sparkops::diagnose {

struct Window {
  SystemTime from;
  SystemTime to;
};

// Fills cause, confidence, evidence and explanation of `slowdown`. `baseline` is the calm period
// the samples are compared with (nullopt: the samples before the slowdown are used).
void attribute_cause(Slowdown& slowdown, const Window& window, std::optional<Window> baseline,
                     const ThermalLog& thermal, const DiagnoseOptions& options);

}  // namespace sparkops::diagnose
