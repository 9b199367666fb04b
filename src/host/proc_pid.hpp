#pragma once
// /proc/PID readers: cmdline, stat, status, smaps_rollup, environ. Parsers are pure; readers go
// through HostRoot. A PID can exit between listing /proc and reading its files: readers then return
// Errc::not_found, and files of other users' processes (environ, smaps_rollup) return
// Errc::permission_denied. Callers scanning many PIDs skip those, they never fail a scan.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/fd.hpp"
#include "base/result.hpp"
#include "host/host_root.hpp"

namespace sparkops::host {

// /proc/PID/cmdline: NUL-separated argv, usually NUL-terminated. A process that rewrote its title
// (setproctitle: "VLLM::EngineCore") leaves one argument padded with NULs or spaces; trailing
// empty arguments are dropped. Kernel threads have an empty cmdline -> empty vector.
std::vector<std::string> parse_proc_cmdline(std::string_view text);

// /proc/PID/stat, the fields sparkops uses.
//   "4242 (python3) S 1 4242 4242 0 -1 4194560 ... 20 0 45 0 1234567 ..."
struct ProcStat {
  std::uint32_t pid = 0;
  std::string comm;  // between the first '(' and the LAST ')': comm may contain spaces and ')'
  char state = '?';
  std::uint32_t ppid = 0;
  std::uint32_t pgrp = 0;         // field 5: process group
  std::uint32_t session = 0;      // field 6: session
  std::uint32_t flags = 0;        // field 9: PF_* flags (0 when unparsable: no field is refused)
  std::uint64_t start_ticks = 0;  // field 22: start time after boot, in clock ticks (USER_HZ)
};
Result<ProcStat> parse_proc_stat(std::string_view text);
// PF_KTHREAD (include/linux/sched.h): a kernel thread, whose cmdline is always empty.
inline constexpr std::uint32_t kProcFlagKernelThread = 0x00200000;

// /proc/PID/status, the fields sparkops uses. Memory fields are absent for kernel threads and
// zombies (the kernel omits the lines), so they are optional.
//   "VmRSS:\t 5237360 kB"
struct ProcStatus {
  std::string name;                       // Name:
  std::optional<std::uint32_t> ppid;      // PPid:
  std::optional<std::uint32_t> real_uid;  // Uid: first of four
  std::optional<std::uint64_t> vm_rss_bytes;
  std::optional<std::uint64_t> vm_swap_bytes;
  // NSpid: the PID in each namespace from the one /proc was mounted in down to the process's own.
  std::vector<std::uint32_t> ns_pids;
};
Result<ProcStatus> parse_proc_status(std::string_view text);

// /proc/PID/smaps_rollup (Linux >= 4.14). Readable only for the same user or root.
//   "Pss:             5101234 kB"
struct SmapsRollup {
  std::optional<std::uint64_t> rss_bytes;
  std::optional<std::uint64_t> pss_bytes;
  std::optional<std::uint64_t> swap_bytes;
};
Result<SmapsRollup> parse_smaps_rollup(std::string_view text);

// /proc/PID/environ: NUL-separated NAME=value. Entries without '=' are skipped. Only variables
// whose name starts with one of `prefixes` are kept (an empty list keeps all), in file order.
using EnvList = std::vector<std::pair<std::string, std::string>>;
EnvList parse_proc_environ(std::string_view text, const std::vector<std::string_view>& prefixes);

// A /proc entry name as a PID: a name that starts with a digit and is a number of at most 32 bits
// (what list_pids has always accepted); nullopt for every other name (self, sys, "1x", a 20-digit
// number, "").
std::optional<std::uint32_t> parse_pid_name(std::string_view name);

// Numeric entries of /proc, ascending. Non-numeric names (self, sys, ...) are skipped.
Result<std::vector<std::uint32_t>> list_pids(const HostRoot& root);

Result<std::vector<std::string>> read_proc_cmdline(const HostRoot& root, std::uint32_t pid);
Result<ProcStat> read_proc_stat(const HostRoot& root, std::uint32_t pid);
Result<ProcStatus> read_proc_status(const HostRoot& root, std::uint32_t pid);
Result<SmapsRollup> read_smaps_rollup(const HostRoot& root, std::uint32_t pid);
Result<EnvList> read_proc_environ(const HostRoot& root, std::uint32_t pid,
                                  const std::vector<std::string_view>& prefixes);
// /proc opened once for a scan of many PIDs. Each file is one openat relative to the directory, a
// read that ends at the first short read, and a close: three system calls, where resolving the
// whole path for every file took open, fstat, read, read (for the 0 that marks the end) and close.
// A short read is the end for procfs (seq_file and cmdline reads fill the buffer while there is
// more) and for a regular file of a captured tree. Files are opened non-blocking, so a FIFO
// planted in a captured tree reads as empty instead of hanging the scan. The directory is only
// opened against, so one ProcDir may serve several threads.
class ProcDir {
 public:
  static Result<ProcDir> open(const HostRoot& root);
  // /proc/PID/FILE, at most `max_bytes`; errors as read_file's (not_found when the PID is gone,
  // permission_denied for another user's file).
  Result<std::string> read(std::uint32_t pid, std::string_view file, std::size_t max_bytes) const;
  // The same file read into `buf` without allocating: the text when the whole file is shorter than
  // `buf`; too_large when it fills `buf` (then read() above takes it whole).
  Result<std::string_view> read_into(std::uint32_t pid, std::string_view file,
                                     std::span<char> buf) const;
  // The entries of this /proc that parse_pid_name accepts, ascending. The directory is read with
  // readdir on a descriptor of its own (opened against this one, so concurrent calls and reads do
  // not share an offset) and names are never copied: no std::filesystem iterator and no string per
  // entry. Every kind of entry is listed (a captured tree's directories and symlinks alike). An
  // error in the middle of the walk (a PID exiting as it is read) ends the walk with what was
  // listed; only failing to open the directory is an error.
  Result<std::vector<std::uint32_t>> list_pids() const;

 private:
  ProcDir(Fd fd, std::string where) : fd_(std::move(fd)), where_(std::move(where)) {}
  // openat of "PID/FILE", non-blocking; errors name the path.
  Result<Fd> open_file(std::uint32_t pid, std::string_view file) const;
  Error error(int err, std::uint32_t pid, std::string_view file, std::string_view verb) const;
  Fd fd_;
  std::string where_;  // the /proc directory, for messages
};

Result<std::vector<std::string>> read_proc_cmdline(const ProcDir& proc, std::uint32_t pid);
Result<ProcStat> read_proc_stat(const ProcDir& proc, std::uint32_t pid);
Result<ProcStatus> read_proc_status(const ProcDir& proc, std::uint32_t pid);
Result<SmapsRollup> read_smaps_rollup(const ProcDir& proc, std::uint32_t pid);
Result<EnvList> read_proc_environ(const ProcDir& proc, std::uint32_t pid,
                                  const std::vector<std::string_view>& prefixes);

// /proc/self/status NSpid: more than one entry means this process runs in a nested PID namespace
// (a container), so PIDs reported by the driver (host PIDs) do not name entries of this /proc.
Result<bool> read_in_nested_pid_namespace(const HostRoot& root);

}  // namespace sparkops::host
