#pragma once
// Hand-built StatusReport values for exporter tests: one with every optional figure present (a GB10
// mid-fine-tune with spbm loaded and a cgroup limit), one from a box with nothing.

#include "status/status_report.hpp"

namespace sparkops::test {

status::StatusReport full_status_report();
status::StatusReport bare_status_report();

}  // namespace sparkops::test
