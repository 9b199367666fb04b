#include "tui/signaller.hpp"

#include <csignal>
#include <cstring>

#include <fmt/format.h>
#include <sys/types.h>
#include <unistd.h>

#include "host/proc_pid.hpp"

namespace sparkops::tui {

namespace {

class SystemSignaller final : public ProcessSignaller {
 public:
  explicit SystemSignaller(host::HostRoot root) : root_(std::move(root)) {}

  std::string refusal(const status::WorkloadLine& w) const override {
    if (!root_.is_live()) {
      return fmt::format("not sent: PID {} is in a captured tree (--root), not on this machine",
                         w.pid);
    }
    if (w.pid <= 1) return fmt::format("not sent: PID {} is not a workload", w.pid);
    if (!w.uid) return fmt::format("not sent: the owner of PID {} is unknown", w.pid);
    const uid_t euid = ::geteuid();
    if (euid != 0 && *w.uid != euid && *w.uid != ::getuid()) {
      return fmt::format("not sent: PID {} belongs to uid {}; only its owner or root may signal it",
                         w.pid, *w.uid);
    }
    return {};
  }

  std::string terminate(const status::WorkloadLine& w) override {
    if (auto why = refusal(w); !why.empty()) return why;
    auto stat = host::read_proc_stat(root_, w.pid);
    if (!stat) return fmt::format("not sent: PID {} has exited", w.pid);
    if (stat->start_ticks != w.start_ticks) {
      return fmt::format("not sent: PID {} is now another process", w.pid);
    }
    if (::kill(static_cast<pid_t>(w.pid), SIGTERM) != 0) {
      const int e = errno;
      return fmt::format("SIGTERM to PID {} failed: {}", w.pid, std::strerror(e));
    }
    return fmt::format("SIGTERM sent to PID {} ({} {})", w.pid, w.kind, w.name);
  }

 private:
  host::HostRoot root_;
};

}  // namespace

std::unique_ptr<ProcessSignaller> make_system_signaller(host::HostRoot root) {
  return std::make_unique<SystemSignaller>(std::move(root));
}

}  // namespace sparkops::tui
