#pragma once
// The one decoder of a waitpid() status, for every child sparkops starts (the watched job,
// nvidia-smi and other helpers).

#include <sys/wait.h>

namespace sparkops {

// The shell convention: the exit status, or 128 + n when killed by signal n. `otherwise` for a
// status that is neither (stopped or continued: reported only with WUNTRACED / WCONTINUED).
inline int exit_code_from_wait_status(int status, int otherwise = 1) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return otherwise;
}

}  // namespace sparkops
