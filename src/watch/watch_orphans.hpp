#pragma once
// Processes a job leaves behind when its main process exits (a daemon, a `setsid` sleeper, a
// data-loader worker that outlived its parent). `sparkops watch` makes itself a child subreaper
// (prctl PR_SET_CHILD_SUBREAPER, Linux >= 3.4): a descendant whose parent exits is re-parented to
// watch instead of init, whatever it did with setsid(2), setpgid(2) or a double fork. So after the
// job's main process has exited, every live process below watch that is not in watch's own process
// group (watch's helpers, such as nvidia-smi, run in it) is one the job started and left running.
// Works without systemd or cgroup delegation; what it cannot see is a process that left watch's
// subtree on purpose (re-parented to a nested subreaper, or handed to systemd over D-Bus).

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "base/result.hpp"

namespace sparkops::watch {

struct Orphan {
  pid_t pid = -1;
  std::string comm;
  pid_t pgrp = -1;
  pid_t session = -1;
  std::uint64_t start_ticks = 0;  // /proc/PID/stat field 22: tells a reused PID apart
};

// Marks this process a child subreaper. Errors: prctl failed (an old kernel); watch then reports
// only orphans still below a live process of the job.
Status become_child_subreaper();

// The live processes whose parent chain (the real /proc, never a --root tree) leads to `self` and
// whose process group is not `own_pgrp`, in PID order. Zombies are not listed: exited children of
// `self` outside `own_pgrp`, other than `keep`, are reaped on the way (re-parented orphans that
// ended), so a long job does not pile them up.
std::vector<Orphan> find_orphans(pid_t self, pid_t own_pgrp, pid_t keep = -1);

struct OrphanEnd {
  std::size_t terminated = 0;  // ended after SIGTERM
  std::size_t killed = 0;      // needed SIGKILL
  std::vector<Orphan>
      survivors;  // still alive after SIGKILL (uninterruptible sleep, normally none)
};

// --kill-orphans: SIGTERM to the job's process group `job_pgrp` and to each orphan (through a pidfd
// when the kernel has pidfd_open, Linux >= 5.3, else kill(2) after checking that the PID still has
// the recorded start time), then up to `grace` for them to exit, SIGKILL to what is left (found
// again, so children of the orphans re-parented meanwhile are included), and reaps them.
OrphanEnd end_orphans(pid_t self, pid_t own_pgrp, pid_t job_pgrp, std::vector<Orphan> orphans,
                      std::chrono::milliseconds grace);

// "pid 4242 (sleep), pid 4250 (python3)": at most `max` named, then "and N more".
std::string describe_orphans(const std::vector<Orphan>& orphans, std::size_t max = 5);

}  // namespace sparkops::watch
