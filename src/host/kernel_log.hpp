#pragma once
// The kernel log: /dev/kmsg records (preferred), else the plain file /var/log/kern.log.
// Consumers look for "Out of memory: Killed process", "oom-kill:", "NVRM: ... NV_ERR_NO_MEMORY".

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "host/host_root.hpp"

namespace sparkops::host {

struct KernelLogRecord {
  std::optional<unsigned> priority;  // syslog level 0 (emerg) .. 7 (debug); kmsg only
  std::optional<unsigned> facility;  // 0 = kernel; kmsg only
  std::optional<std::uint64_t> seq;  // kmsg sequence number
  std::optional<std::uint64_t>
      timestamp_us;  // since boot (kmsg field, or kern.log "[  12.345678]")
  std::string message;
};

enum class KernelLogSource { kmsg, kern_log_file };

struct KernelLog {
  KernelLogSource source = KernelLogSource::kmsg;
  std::vector<KernelLogRecord> records;  // oldest first
  bool truncated = false;                // older records were dropped to stay under max_bytes
  std::vector<std::string> notes;        // e.g. why /dev/kmsg was not used
};

// Pure: kmsg records, one per line ("6,1234,5678,-;message"); continuation lines (" KEY=value",
// the record's dictionary) are skipped. A record without its "prio,seq,ts" header is malformed,
// naming `file` and the line.
Result<std::vector<KernelLogRecord>> parse_kmsg(std::string_view text, std::string_view file);

// Pure: syslog-format lines ("Nov  9 09:26:12 spark kernel: [  812.345678] NVRM: ...").
// The message is the text after "kernel: " (the whole line when absent), with a leading
// "[seconds.micros]" moved into timestamp_us. Never fails: free text has no wrong form.
std::vector<KernelLogRecord> parse_kern_log(std::string_view text);

// Reads <root>/dev/kmsg non-blocking, one record per read() until EAGAIN (a regular file there, as
// in a captured tree, is parsed line by line). When /dev/kmsg is missing or not readable
// (dmesg_restrict), falls back to the last max_bytes of /var/log/kern.log, with a note.
// Keeps the newest records whose messages fit in max_bytes. nullopt when neither exists;
// permission_denied when neither could be read for lack of permission.
Result<std::optional<KernelLog>> read_kernel_log(const HostRoot& root, std::size_t max_bytes);

}  // namespace sparkops::host
