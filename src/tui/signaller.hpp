#pragma once
// Sending SIGTERM to a workload from `top`. The controller only calls this after the user
// confirmed. The system implementation refuses, with one line saying why:
//  - on a captured --root (its PIDs are not processes of this machine);
//  - when the owner is unknown, or is neither the caller's real nor effective UID (root may
//    signal anyone; kill(2) has the final word and its error is reported);
//  - when the PID now names another process (its start time changed since the scan) or is gone.

#include <memory>
#include <string>

#include "host/host_root.hpp"
#include "status/status_report.hpp"

namespace sparkops::tui {

class ProcessSignaller {
 public:
  virtual ~ProcessSignaller() = default;
  // Empty when `w` may be signalled; else one line for the user.
  virtual std::string refusal(const status::WorkloadLine& w) const = 0;
  // Sends SIGTERM to w.pid (re-checking everything refusal checks); returns the line to show.
  virtual std::string terminate(const status::WorkloadLine& w) = 0;
};

std::unique_ptr<ProcessSignaller> make_system_signaller(host::HostRoot root);

}  // namespace sparkops::tui
