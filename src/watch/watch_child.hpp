#pragma once
// The job `sparkops watch` runs: CMD exec'd directly (execvp, no shell) in its own process group,
// stdout and stderr on two pipes (read ends non-blocking, close-on-exec). stdin is inherited.

#include <sys/types.h>

#include <string>
#include <vector>

#include "base/result.hpp"

namespace sparkops {

struct ChildProcess {
  pid_t pid = -1;   // also the process group id
  int out_fd = -1;  // read end of the child's stdout
  int err_fd = -1;  // read end of the child's stderr
};

// Errors: the pipes could not be made, fork failed, or exec failed (not_found naming CMD when it is
// not on PATH, permission_denied when not executable); the child is reaped in those cases.
Result<ChildProcess> spawn_child(const std::vector<std::string>& argv);

// The shell convention: the exit status, or 128 + n when killed by signal n.
int exit_code_from_wait_status(int status);

// Sends `sig` to the child's process group (the whole job, its workers included).
void signal_job(const ChildProcess& child, int sig);

}  // namespace sparkops
