#include "watch/watch_child.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace sparkops {

namespace {

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// Only async-signal-safe calls between fork and exec.
[[noreturn]] void exec_in_child(char* const* argv, int out_w, int err_w, int status_w) {
  ::setpgid(0, 0);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGCHLD, SIGQUIT})
    ::sigaction(sig, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  if (::dup2(out_w, STDOUT_FILENO) < 0 || ::dup2(err_w, STDERR_FILENO) < 0) {
    const int e = errno;
    (void)!::write(status_w, &e, sizeof e);
    ::_exit(127);
  }
  ::execvp(argv[0], argv);
  const int e = errno;
  (void)!::write(status_w, &e, sizeof e);
  ::_exit(127);
}

}  // namespace

Result<ChildProcess> spawn_child(const std::vector<std::string>& argv) {
  if (argv.empty())
    return fail(Errc::invalid_argument, "no command given (sparkops watch [options] -- CMD ...)");
  int out[2] = {-1, -1}, err[2] = {-1, -1}, status[2] = {-1, -1};
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0 ||
      ::pipe2(status, O_CLOEXEC) != 0) {
    const int e = errno;
    for (int* p : {out, err, status}) {
      close_fd(p[0]);
      close_fd(p[1]);
    }
    return fail(Errc::io, fmt::format("cannot create pipes: {}", std::strerror(e)));
  }
  std::vector<std::string> copy = argv;
  std::vector<char*> args;
  for (auto& a : copy) args.push_back(a.data());
  args.push_back(nullptr);

  const pid_t pid = ::fork();
  if (pid == 0) exec_in_child(args.data(), out[1], err[1], status[1]);
  const int fork_errno = errno;
  close_fd(out[1]);
  close_fd(err[1]);
  close_fd(status[1]);
  if (pid < 0) {
    close_fd(out[0]);
    close_fd(err[0]);
    close_fd(status[0]);
    return fail(Errc::io, fmt::format("fork: {}", std::strerror(fork_errno)));
  }
  ::setpgid(pid, pid);  // also here, so the group exists before we signal it

  int exec_errno = 0;
  ssize_t got = 0;
  do {
    got = ::read(status[0], &exec_errno, sizeof exec_errno);
  } while (got < 0 && errno == EINTR);
  close_fd(status[0]);
  if (got == static_cast<ssize_t>(sizeof exec_errno)) {
    int ignored = 0;
    while (::waitpid(pid, &ignored, 0) < 0 && errno == EINTR) {
    }
    close_fd(out[0]);
    close_fd(err[0]);
    const Errc code = exec_errno == ENOENT   ? Errc::not_found
                      : exec_errno == EACCES ? Errc::permission_denied
                                             : Errc::io;
    return fail(code, fmt::format("{}: {}", argv[0], std::strerror(exec_errno)));
  }
  for (int fd : {out[0], err[0]}) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  return ChildProcess{pid, out[0], err[0]};
}

int exit_code_from_wait_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

void signal_job(const ChildProcess& child, int sig) {
  if (child.pid <= 0) return;
  if (::kill(-child.pid, sig) != 0) ::kill(child.pid, sig);
}

}  // namespace sparkops
