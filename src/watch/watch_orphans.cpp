#include "watch/watch_orphans.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <thread>

#include <fmt/format.h>

#include "base/utf8.hpp"
#include "host/host_root.hpp"
#include "host/proc_pid.hpp"

namespace sparkops::watch {

namespace {

// Orphans are real processes: always the machine's own /proc, whatever --root says.
const host::HostRoot& real_proc() {
  static const host::HostRoot root("/");
  return root;
}

std::optional<host::ProcStat> stat_of(pid_t pid) {
  auto st = host::read_proc_stat(real_proc(), static_cast<std::uint32_t>(pid));
  if (!st) return std::nullopt;
  return *st;
}

// Sends `sig` to `o` only while its PID still names the process that was listed.
bool signal_orphan(const Orphan& o, int sig) {
#ifdef SYS_pidfd_open
  const int fd = static_cast<int>(::syscall(SYS_pidfd_open, o.pid, 0));
  if (fd >= 0) {
    // The pidfd pins whatever process has the PID now; the start time says whether it is ours.
    const auto st = stat_of(o.pid);
    const bool same = st && st->start_ticks == o.start_ticks;
    const bool sent = same && ::syscall(SYS_pidfd_send_signal, fd, sig, nullptr, 0) == 0;
    ::close(fd);
    return sent;
  }
  if (errno != ENOSYS) return false;  // ESRCH: it is gone
#endif
  const auto st = stat_of(o.pid);
  return st && st->start_ticks == o.start_ticks && ::kill(o.pid, sig) == 0;
}

}  // namespace

Status become_child_subreaper() {
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
    return fail(Errc::unsupported,
                fmt::format("prctl(PR_SET_CHILD_SUBREAPER): {}", std::strerror(errno)));
  }
  return {};
}

std::vector<Orphan> find_orphans(pid_t self, pid_t own_pgrp, pid_t keep) {
  std::vector<Orphan> out;
  auto pids = host::list_pids(real_proc());
  if (!pids) return out;
  std::map<std::uint32_t, host::ProcStat> stats;
  for (const auto pid : *pids) {
    if (auto st = host::read_proc_stat(real_proc(), pid)) stats.emplace(pid, std::move(*st));
  }
  const auto below_self = [&](std::uint32_t pid) {
    // A parent chain is at most as long as the process table; 4096 bounds a torn read's loop.
    for (int depth = 0; depth < 4096; ++depth) {
      const auto it = stats.find(pid);
      if (it == stats.end() || it->second.ppid == 0) return false;
      if (it->second.ppid == static_cast<std::uint32_t>(self)) return true;
      pid = it->second.ppid;
    }
    return false;
  };
  for (const auto& [pid, st] : stats) {
    if (static_cast<pid_t>(pid) == self || static_cast<pid_t>(st.pgrp) == own_pgrp) continue;
    if (!below_self(pid)) continue;
    if (st.state == 'Z' || st.state == 'X') {
      if (st.ppid == static_cast<std::uint32_t>(self) && static_cast<pid_t>(pid) != keep) {
        int status = 0;
        (void)::waitpid(static_cast<pid_t>(pid), &status, WNOHANG);
      }
      continue;
    }
    if (static_cast<pid_t>(pid) == keep) continue;
    out.push_back(Orphan{static_cast<pid_t>(pid), st.comm, static_cast<pid_t>(st.pgrp),
                         static_cast<pid_t>(st.session), st.start_ticks});
  }
  return out;
}

OrphanEnd end_orphans(pid_t self, pid_t own_pgrp, pid_t job_pgrp, std::vector<Orphan> orphans,
                      std::chrono::milliseconds grace) {
  using Clock = std::chrono::steady_clock;
  constexpr auto kPoll = std::chrono::milliseconds{20};
  OrphanEnd end;
  const auto wait_for_none = [&](std::chrono::milliseconds limit) {
    const auto deadline = Clock::now() + limit;
    auto left = find_orphans(self, own_pgrp);
    while (!left.empty() && Clock::now() < deadline) {
      std::this_thread::sleep_for(kPoll);
      left = find_orphans(self, own_pgrp);
    }
    return left;
  };
  if (job_pgrp > 0) ::kill(-job_pgrp, SIGTERM);
  for (const auto& o : orphans) signal_orphan(o, SIGTERM);
  auto left = wait_for_none(grace);
  end.terminated = orphans.size() > left.size() ? orphans.size() - left.size() : 0;
  if (left.empty()) return end;
  if (job_pgrp > 0) ::kill(-job_pgrp, SIGKILL);
  for (const auto& o : left) {
    if (signal_orphan(o, SIGKILL)) ++end.killed;
  }
  // SIGKILL cannot be caught; what remains after a second is in uninterruptible sleep.
  end.survivors = wait_for_none(std::chrono::milliseconds{1000});
  return end;
}

std::string describe_orphans(const std::vector<Orphan>& orphans, std::size_t max) {
  std::string text;
  for (std::size_t i = 0; i < orphans.size() && i < max; ++i) {
    if (!text.empty()) text += ", ";
    text += fmt::format("pid {} ({})", orphans[i].pid, terminal_text(orphans[i].comm));
  }
  if (orphans.size() > max) text += fmt::format(" and {} more", orphans.size() - max);
  return text;
}

}  // namespace sparkops::watch
