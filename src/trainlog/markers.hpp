#pragma once
// Lines, in any format, that announce a pause in training: checkpoint saves, evaluation passes and
// resumed runs. Matched on exact phrases the trainers print (quoted beside each pattern).

#include <optional>
#include <string_view>

#include "trainlog/step_series.hpp"

namespace sparkops::trainlog {

std::optional<MarkerKind> detect_marker(std::string_view line);

}  // namespace sparkops::trainlog
