#include "host/proc_pid.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

#include <fmt/format.h>

#include "base/file_io.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "host/proc_text.hpp"

namespace sparkops::host {

namespace {

// cmdline and environ are bounded by ARG_MAX-ish sizes; 1 MiB keeps a hostile process from making
// a scan allocate without bound.
constexpr std::size_t kProcFileLimit = 1024 * 1024;

std::string pid_path(std::uint32_t pid, std::string_view file) {
  return fmt::format("/proc/{}/{}", pid, file);
}

// "VmRSS:\t 5237360 kB" value part -> bytes. Values without a unit are taken as-is.
std::optional<std::uint64_t> parse_kb_value(std::string_view value) {
  value = trim(value);
  if (value.ends_with("kB")) {
    value.remove_suffix(2);
    const auto kb = parse_u64(value);
    if (!kb) return std::nullopt;
    return *kb * kKiB;
  }
  return parse_u64(value);
}

std::optional<std::uint32_t> parse_u32(std::string_view s) {
  const auto v = parse_u64(s);
  if (!v || *v > 0xffffffffULL) return std::nullopt;
  return static_cast<std::uint32_t>(*v);
}

}  // namespace

std::vector<std::string> parse_proc_cmdline(std::string_view text) {
  // The NUL-separated pieces (the last one after the final NUL, often empty), each copied once.
  std::vector<std::string> argv;
  if (text.empty()) return argv;  // a kernel thread's
  const char* at = text.data();
  const char* const end = at + text.size();
  argv.reserve(static_cast<std::size_t>(std::count(at, end, '\0')) + 1);  // one allocation
  while (true) {
    const auto* nul =
        static_cast<const char*>(std::memchr(at, '\0', static_cast<std::size_t>(end - at)));
    argv.emplace_back(at, nul == nullptr ? end : nul);
    if (nul == nullptr) break;
    at = nul + 1;
  }
  while (!argv.empty() && argv.back().empty()) argv.pop_back();
  // setproctitle pads the rewritten title with spaces (or NULs, dropped above).
  if (argv.size() == 1) {
    const auto t = trim(argv.front());
    argv.front() = std::string(t);
    if (argv.front().empty()) argv.clear();
  }
  return argv;
}

Result<ProcStat> parse_proc_stat(std::string_view text) {
  // The last ')' is found with memrchr: string_view::rfind walked the ~30 fields after comm back
  // one character at a time, once per process of a scan.
  const auto open = text.find('(');
  const auto* close_at =
      text.empty() ? nullptr : static_cast<const char*>(::memrchr(text.data(), ')', text.size()));
  const std::size_t close = close_at == nullptr ? std::string_view::npos
                                                : static_cast<std::size_t>(close_at - text.data());
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return fail(Errc::malformed, fmt::format("stat {}: no (comm)", quote_for_message(text)));
  }
  ProcStat st;
  const auto pid = parse_u32(text.substr(0, open));
  if (!pid) return fail(Errc::malformed, fmt::format("stat {}: bad pid", quote_for_message(text)));
  st.pid = *pid;
  st.comm = std::string(text.substr(open + 1, close - open - 1));
  // Fields after comm: state is field 3, ppid 4, pgrp 5, session 6, flags 9, starttime 22 ->
  // indices 0, 1, 2, 3, 6, 19. Only the first 20 of the ~50 are split, into a fixed array: the
  // process scan parses one stat per process, and a vector of every field was most of its cost.
  std::string_view fields[20];
  std::size_t count = 0;
  for (std::string_view rest = trim(text.substr(close + 1));
       count < std::size(fields) && proc_text::next_token(rest, fields[count]);)
    ++count;
  if (count < std::size(fields)) {
    return fail(Errc::malformed, fmt::format("stat {}: too few fields", quote_for_message(text)));
  }
  st.state = fields[0].empty() ? '?' : fields[0].front();
  const auto ppid = parse_u32(fields[1]);
  const auto pgrp = parse_u32(fields[2]);
  const auto session = parse_u32(fields[3]);
  const auto start = parse_u64(fields[19]);
  if (!ppid || !pgrp || !session || !start) {
    return fail(Errc::malformed, fmt::format("stat {}: bad ppid, pgrp, session or starttime",
                                             quote_for_message(text)));
  }
  st.ppid = *ppid;
  st.pgrp = *pgrp;
  st.session = *session;
  st.flags = parse_u32(fields[6]).value_or(0);
  st.start_ticks = *start;
  return st;
}

Result<ProcStatus> parse_proc_status(std::string_view text) {
  ProcStatus st;
  for (const auto line : split_lines(text)) {
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const auto key = line.substr(0, colon);
    const auto value = line.substr(colon + 1);
    if (key == "Name") {
      st.name = std::string(trim(value));
    } else if (key == "PPid") {
      st.ppid = parse_u32(value);
    } else if (key == "Uid") {
      const auto ids = split_ws(trim(value));
      if (!ids.empty()) st.real_uid = parse_u32(ids.front());
    } else if (key == "VmRSS" || key == "VmSwap") {
      const auto bytes = parse_kb_value(value);
      if (!bytes) {
        return fail(Errc::malformed,
                    fmt::format("status: bad {} line {}", key, quote_for_message(line)));
      }
      (key == "VmRSS" ? st.vm_rss_bytes : st.vm_swap_bytes) = bytes;
    } else if (key == "NSpid") {
      for (const auto id : split_ws(trim(value))) {
        if (const auto v = parse_u32(id)) st.ns_pids.push_back(*v);
      }
    }
  }
  return st;
}

Result<SmapsRollup> parse_smaps_rollup(std::string_view text) {
  SmapsRollup r;
  for (const auto line : split_lines(text)) {
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;  // the "00400000-ffff... [rollup]" header
    const auto key = line.substr(0, colon);
    std::optional<std::uint64_t>* slot = nullptr;
    if (key == "Rss")
      slot = &r.rss_bytes;
    else if (key == "Pss")
      slot = &r.pss_bytes;
    else if (key == "Swap")
      slot = &r.swap_bytes;
    if (slot == nullptr) continue;
    *slot = parse_kb_value(line.substr(colon + 1));
    if (!*slot) {
      return fail(Errc::malformed,
                  fmt::format("smaps_rollup: bad line {}", quote_for_message(line)));
    }
  }
  return r;
}

EnvList parse_proc_environ(std::string_view text, const std::vector<std::string_view>& prefixes) {
  EnvList env;
  for (const auto entry : split(text, '\0')) {
    const auto eq = entry.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    const auto name = entry.substr(0, eq);
    const bool wanted =
        prefixes.empty() || std::any_of(prefixes.begin(), prefixes.end(),
                                        [&](std::string_view p) { return name.starts_with(p); });
    if (wanted) env.emplace_back(std::string(name), std::string(entry.substr(eq + 1)));
  }
  return env;
}

std::optional<std::uint32_t> parse_pid_name(std::string_view name) {
  if (name.empty() || name.front() < '0' || name.front() > '9') return std::nullopt;
  return parse_u32(name);
}

Result<std::vector<std::uint32_t>> list_pids(const HostRoot& root) {
  auto proc = ProcDir::open(root);
  if (!proc) return tl::unexpected(proc.error());
  return proc->list_pids();
}

Result<std::vector<std::string>> read_proc_cmdline(const HostRoot& root, std::uint32_t pid) {
  auto text = root.read(pid_path(pid, "cmdline"), kProcFileLimit);
  if (!text) return tl::unexpected(text.error());
  return parse_proc_cmdline(*text);
}

Result<ProcStat> read_proc_stat(const HostRoot& root, std::uint32_t pid) {
  auto text = root.read(pid_path(pid, "stat"), kProcFileLimit);
  if (!text) return tl::unexpected(text.error());
  return parse_proc_stat(*text);
}

Result<ProcStatus> read_proc_status(const HostRoot& root, std::uint32_t pid) {
  auto text = root.read(pid_path(pid, "status"), kProcFileLimit);
  if (!text) return tl::unexpected(text.error());
  return parse_proc_status(*text);
}

Result<SmapsRollup> read_smaps_rollup(const HostRoot& root, std::uint32_t pid) {
  auto text = root.read(pid_path(pid, "smaps_rollup"), kProcFileLimit);
  if (!text) return tl::unexpected(text.error());
  return parse_smaps_rollup(*text);
}

Result<EnvList> read_proc_environ(const HostRoot& root, std::uint32_t pid,
                                  const std::vector<std::string_view>& prefixes) {
  auto text = root.read(pid_path(pid, "environ"), kProcFileLimit);
  if (!text) return tl::unexpected(text.error());
  return parse_proc_environ(*text, prefixes);
}

Result<ProcDir> ProcDir::open(const HostRoot& root) {
  const auto dir = root.resolve("/proc");
  Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return tl::unexpected(errno_error(errno, dir, "open"));
  return ProcDir(std::move(fd), dir.string());
}

Error ProcDir::error(int err, std::uint32_t pid, std::string_view file,
                     std::string_view verb) const {
  return errno_error(err, fmt::format("{}/{}/{}", where_, pid, file), verb);
}

Result<Fd> ProcDir::open_file(std::uint32_t pid, std::string_view file) const {
  // "4294967295/" + the file name, without allocating: names here are a few bytes long.
  char name[64];
  auto [end, ec] = std::to_chars(name, name + 11, pid);
  if (ec != std::errc{} || file.size() + 2 > static_cast<std::size_t>(name + sizeof name - end)) {
    return fail(Errc::invalid_argument, fmt::format("{}/{}/{}: name too long", where_, pid, file));
  }
  *end++ = '/';
  end = std::copy(file.begin(), file.end(), end);
  *end = '\0';
  Fd fd(::openat(fd_.get(), name, O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) return tl::unexpected(error(errno, pid, file, "open"));
  return fd;
}

Result<std::string> ProcDir::read(std::uint32_t pid, std::string_view file,
                                  std::size_t max_bytes) const {
  auto fd = open_file(pid, file);
  if (!fd) return tl::unexpected(fd.error());
  std::string out;
  char buf[4096];
  while (true) {
    const ssize_t n = ::read(fd->get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return tl::unexpected(error(errno, pid, file, "read"));
    }
    if (out.size() + static_cast<std::size_t>(n) > max_bytes) {
      return fail(Errc::too_large, fmt::format("{}/{}/{}: larger than the {} byte limit", where_,
                                               pid, file, max_bytes));
    }
    out.append(buf, static_cast<std::size_t>(n));
    if (static_cast<std::size_t>(n) < sizeof buf) break;  // short read: the end (see the header)
  }
  return out;
}

Result<std::string_view> ProcDir::read_into(std::uint32_t pid, std::string_view file,
                                            std::span<char> buf) const {
  auto fd = open_file(pid, file);
  if (!fd) return tl::unexpected(fd.error());
  while (true) {
    const ssize_t n = ::read(fd->get(), buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return tl::unexpected(error(errno, pid, file, "read"));
    }
    if (static_cast<std::size_t>(n) < buf.size()) {  // short read: the whole file (the header)
      return std::string_view(buf.data(), static_cast<std::size_t>(n));
    }
    return fail(Errc::too_large,
                fmt::format("{}/{}/{}: {} bytes or more", where_, pid, file, buf.size()));
  }
}

Result<std::vector<std::uint32_t>> ProcDir::list_pids() const {
  const int fd = ::openat(fd_.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return tl::unexpected(errno_error(errno, where_, "list"));
  DIR* dir = ::fdopendir(fd);  // owns fd from here on, closedir closes it
  if (dir == nullptr) {
    const int err = errno;
    ::close(fd);
    return tl::unexpected(errno_error(err, where_, "list"));
  }
  std::vector<std::uint32_t> pids;
  pids.reserve(512);
  while (const dirent* entry = ::readdir(dir)) {
    if (const auto pid = parse_pid_name(entry->d_name)) pids.push_back(*pid);
  }
  ::closedir(dir);
  std::sort(pids.begin(), pids.end());
  return pids;
}

// The scan reads a cmdline and a stat for every process: both land in a stack buffer first (a
// stat is ~300 bytes, most command lines are shorter than 4 KiB) and only a longer file is read
// again into a string, so the common case allocates nothing for the text.
Result<std::vector<std::string>> read_proc_cmdline(const ProcDir& proc, std::uint32_t pid) {
  char buf[4096];
  const auto small = proc.read_into(pid, "cmdline", buf);
  if (small) return parse_proc_cmdline(*small);
  if (small.error().code != Errc::too_large) return tl::unexpected(small.error());
  auto text = proc.read(pid, "cmdline", kProcFileLimit);
  if (!text) return tl::unexpected(text.error());
  return parse_proc_cmdline(*text);
}

Result<ProcStat> read_proc_stat(const ProcDir& proc, std::uint32_t pid) {
  char buf[2048];
  const auto small = proc.read_into(pid, "stat", buf);
  if (small) return parse_proc_stat(*small);
  if (small.error().code != Errc::too_large) return tl::unexpected(small.error());
  auto text = proc.read(pid, "stat", kProcFileLimit);
  if (!text) return tl::unexpected(text.error());
  return parse_proc_stat(*text);
}

Result<ProcStatus> read_proc_status(const ProcDir& proc, std::uint32_t pid) {
  auto text = proc.read(pid, "status", kProcFileLimit);
  if (!text) return tl::unexpected(text.error());
  return parse_proc_status(*text);
}

Result<SmapsRollup> read_smaps_rollup(const ProcDir& proc, std::uint32_t pid) {
  auto text = proc.read(pid, "smaps_rollup", kProcFileLimit);
  if (!text) return tl::unexpected(text.error());
  return parse_smaps_rollup(*text);
}

Result<EnvList> read_proc_environ(const ProcDir& proc, std::uint32_t pid,
                                  const std::vector<std::string_view>& prefixes) {
  auto text = proc.read(pid, "environ", kProcFileLimit);
  if (!text) return tl::unexpected(text.error());
  return parse_proc_environ(*text, prefixes);
}

Result<bool> read_in_nested_pid_namespace(const HostRoot& root) {
  auto text = root.read("/proc/self/status", kProcFileLimit);
  if (!text) return tl::unexpected(text.error());
  auto status = parse_proc_status(*text);
  if (!status) return tl::unexpected(status.error());
  if (status->ns_pids.empty()) {
    return fail(Errc::unsupported, "/proc/self/status: no NSpid line (kernel older than 4.1)");
  }
  return status->ns_pids.size() > 1;
}

}  // namespace sparkops::host
