#include "watch/watch_child.hpp"

#include <fcntl.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "term/terminal.hpp"

namespace sparkops::watch {

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
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGCHLD, SIGQUIT, SIGXFSZ})
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

// A pseudo-terminal as {master, slave} in the layout pipe2 uses ({read end, write end}), both
// close-on-exec (the child dup2s the slave, which clears the flag on the copy), output
// post-processing off so the job's bytes pass unchanged.
bool open_pty(int fds[2], const winsize& size) {
  int master = -1, slave = -1;
  winsize ws = size;
  if (::openpty(&master, &slave, nullptr, nullptr, &ws) != 0) return false;
  termios t{};
  if (::tcgetattr(slave, &t) == 0) {
    t.c_oflag &= ~static_cast<tcflag_t>(OPOST);  // no \n -> \r\n: byte-identical output
    (void)::tcsetattr(slave, TCSANOW, &t);
  }
  for (int fd : {master, slave}) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  fds[0] = master;
  fds[1] = slave;
  return true;
}

}  // namespace

std::optional<winsize> own_terminal_size() {
  return term::window_size({STDOUT_FILENO, STDERR_FILENO, STDIN_FILENO});
}

void resize_job_terminal(const ChildProcess& child, const winsize& size) {
  if (!child.pty) return;
  for (int fd : {child.out_fd, child.err_fd}) {
    if (fd >= 0) (void)::ioctl(fd, TIOCSWINSZ, &size);
  }
  signal_job(child, SIGWINCH);
}

Result<ChildProcess> spawn_child(const std::vector<std::string>& argv, ChildOutput output,
                                 const std::optional<winsize>& size) {
  if (argv.empty())
    return fail(Errc::invalid_argument, "no command given (sparkops watch [options] -- CMD ...)");
  int out[2] = {-1, -1}, err[2] = {-1, -1}, status[2] = {-1, -1};
  const auto close_all = [&] {
    for (int* p : {out, err, status}) {
      close_fd(p[0]);
      close_fd(p[1]);
    }
  };
  const bool pty = output == ChildOutput::pty;
  if (pty) {
    winsize ws{};
    ws.ws_row = 24;
    ws.ws_col = 80;
    if (size) ws = *size;
    if (!open_pty(out, ws) || !open_pty(err, ws)) {
      const int e = errno;
      close_all();
      return fail(Errc::unsupported,
                  fmt::format("cannot open a pseudo-terminal: {}", std::strerror(e)));
    }
  }
  if ((!pty && (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0)) ||
      ::pipe2(status, O_CLOEXEC) != 0) {
    const int e = errno;
    close_all();
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
  return ChildProcess{pid, out[0], err[0], pty};
}

void signal_job(const ChildProcess& child, int sig) {
  if (child.pid <= 0) return;
  if (::kill(-child.pid, sig) != 0) ::kill(child.pid, sig);
}

}  // namespace sparkops::watch
