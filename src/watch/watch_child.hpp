#pragma once
// The job `sparkops watch` runs: CMD exec'd directly (execvp, no shell) in its own process group,
// stdout and stderr on two pipes or on two pseudo-terminals (read ends non-blocking,
// close-on-exec). stdin is inherited.
//
// Under a pseudo-terminal (the default, as `script` and `unbuffer` do) the job's stdout and stderr
// are terminals: a Python print loop is line-buffered instead of block-buffered into a pipe, tqdm
// draws as on a terminal, and the job sees the real terminal's size. Each stream has its own pty,
// so stdout and stderr stay apart as with pipes; output post-processing is off on both (no \n ->
// \r\n), so the bytes arrive exactly as written. The ptys are not the job's controlling terminal
// (it stays in sparkops' session, its own process group): closing them sends no SIGHUP to what
// the job leaves running, and a resize reaches the job through resize_job_terminal.

#include <sys/ioctl.h>
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "base/result.hpp"

namespace sparkops::watch {

struct ChildProcess {
  pid_t pid = -1;    // also the process group id
  int out_fd = -1;   // read end of the child's stdout
  int err_fd = -1;   // read end of the child's stderr
  bool pty = false;  // out_fd/err_fd are pseudo-terminal masters
};

enum class ChildOutput { pipes, pty };

// Errors: the pipes or ptys could not be made (unsupported when no pty can be opened, so the
// caller can fall back to pipes), fork failed, or exec failed (not_found naming CMD when it is not
// on PATH, permission_denied when not executable); the child is reaped in those cases. `size` is
// the ptys' size (ignored for pipes); without one they are 80x24.
Result<ChildProcess> spawn_child(const std::vector<std::string>& argv,
                                 ChildOutput output = ChildOutput::pipes,
                                 const std::optional<winsize>& size = std::nullopt);

// The size of the first of stdout, stderr and stdin that is a terminal; nullopt when none is.
std::optional<winsize> own_terminal_size();

// Gives the job's ptys `size` and sends SIGWINCH to its process group (nothing for pipes).
void resize_job_terminal(const ChildProcess& child, const winsize& size);

// Sends `sig` to the child's process group (the whole job, its workers included).
void signal_job(const ChildProcess& child, int sig);

}  // namespace sparkops::watch
