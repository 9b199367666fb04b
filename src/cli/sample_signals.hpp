#pragma once
// Signal handling for `sparkops sample` (docs/design.md §5: signals live only in cli/). SIGINT and
// SIGTERM ask the loop to stop; SIGHUP asks it to reopen its files (logrotate). Handlers only set
// flags; they are installed without SA_RESTART so a sleeping sampler wakes at once.

#include "sampling/sample_run.hpp"

namespace sparkops::cli {

// Installs the handlers for the lifetime of the object and restores the previous ones after.
// One at a time per process (the handlers reach the flags through one file-local pointer).
class ScopedSampleSignals {
 public:
  explicit ScopedSampleSignals(SampleSignalFlags& flags);
  ~ScopedSampleSignals();
  ScopedSampleSignals(const ScopedSampleSignals&) = delete;
  ScopedSampleSignals& operator=(const ScopedSampleSignals&) = delete;
};

}  // namespace sparkops::cli
