#pragma once
// USER_HZ, the unit of the start times in /proc/PID/stat: sysconf on the live machine, 100 (the
// Linux value on every architecture sparkops targets) for a captured root. Every reader of
// process ages (status, procs, the --beside scans) takes it from here.

#include <cstdint>

#include "host/host_root.hpp"

namespace sparkops::host {

std::uint64_t clock_ticks_per_second(const HostRoot& root);

}  // namespace sparkops::host
