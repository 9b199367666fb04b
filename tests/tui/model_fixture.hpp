#pragma once
// A hand-written TopModel: a GB10 mid-fine-tune beside a capped vLLM and an orphaned engine,
// throttling on the SW power cap with the bits clear, the platform-cap signature open, and a
// few events. Every figure is literal so the goldens do not depend on any reader.

#include "tui/top_model.hpp"

namespace sparkops::tui::test {

TopModel busy_gb10_model();
// The same machine with no GPU library and nothing running.
TopModel quiet_model_without_gpu();

}  // namespace sparkops::tui::test
