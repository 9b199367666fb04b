#include "gpu/subprocess.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "base/fd.hpp"
#include "base/text.hpp"
#include "base/wait_status.hpp"

extern char** environ;

namespace sparkops::gpu {

std::optional<std::string> find_on_path(std::string_view name, std::string_view path_env) {
  if (name.empty() || name.find('/') != std::string_view::npos) return std::nullopt;
  for (std::string_view dir : split(path_env, ':')) {
    if (dir.empty() || dir.front() != '/') continue;  // "" and relative entries mean the cwd: skip
    std::string candidate = fmt::format("{}/{}", dir, name);
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return std::nullopt;
}

Result<CapturedOutput> run_captured(const std::vector<std::string>& argv,
                                    std::chrono::milliseconds timeout, std::size_t max_bytes) {
  if (argv.empty()) return fail(Errc::invalid_argument, "run_captured: empty argv");
  int out_pipe[2];
  int err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    return fail(Errc::io, fmt::format("{}: pipe: {}", argv[0], std::strerror(errno)));
  }
  Fd out_r(out_pipe[0]), out_w(out_pipe[1]);
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    return fail(Errc::io, fmt::format("{}: pipe: {}", argv[0], std::strerror(errno)));
  }
  Fd err_r(err_pipe[0]), err_w(err_pipe[1]);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_w.get(), 1);
  posix_spawn_file_actions_adddup2(&actions, err_w.get(), 2);
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // sparkops ignores SIGXFSZ (main.cpp); the child gets the default back, as it would from a shell.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGXFSZ);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, argv[0].c_str(), &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0)
    return fail(Errc::io, fmt::format("{}: cannot start: {}", argv[0], std::strerror(rc)));
  out_w.reset();
  err_w.reset();

  CapturedOutput result;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool out_open = true, err_open = true;
  std::optional<Error> problem;
  char buf[8192];
  while ((out_open || err_open) && !problem) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      problem = Error{Errc::timed_out,
                      fmt::format("{}: timed out after {} ms", argv[0], timeout.count())};
      break;
    }
    pollfd fds[2] = {{out_open ? out_r.get() : -1, POLLIN, 0},
                     {err_open ? err_r.get() : -1, POLLIN, 0}};
    const int n = ::poll(fds, 2, static_cast<int>(left.count()));
    if (n < 0) {
      if (errno == EINTR) continue;
      problem = Error{Errc::io, fmt::format("{}: poll: {}", argv[0], std::strerror(errno))};
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        (i == 0 ? out_open : err_open) = false;
        continue;
      }
      std::string& sink = i == 0 ? result.out : result.err;
      sink.append(buf, static_cast<std::size_t>(got));
      if (sink.size() > max_bytes) {
        problem =
            Error{Errc::too_large, fmt::format("{}: wrote more than {} bytes", argv[0], max_bytes)};
      }
    }
  }
  int status = 0;
  // Both streams closed: the child is exiting, or it closed them and hangs; bound that wait too.
  while (!problem) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) {
      problem = Error{Errc::io, fmt::format("{}: waitpid: {}", argv[0], std::strerror(errno))};
    } else if (std::chrono::steady_clock::now() >= deadline) {
      problem = Error{Errc::timed_out,
                      fmt::format("{}: timed out after {} ms", argv[0], timeout.count())};
    } else {
      ::usleep(2000);
    }
  }
  if (problem) {
    ::kill(pid, SIGKILL);
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return tl::unexpected(*problem);
  }
  result.exit_code = exit_code_from_wait_status(status, -1);
  return result;
}

}  // namespace sparkops::gpu
