#include "host/kernel_log.hpp"

#include "base/fd.hpp"

#include <cerrno>
#include <cstring>
#include <deque>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "base/text.hpp"

namespace sparkops::host {

namespace {

// One kmsg record header + message: "6,1234,5678,-;message" (extra header fields are allowed).
Result<KernelLogRecord> parse_kmsg_record(std::string_view line, std::string_view file,
                                          std::size_t line_no) {
  const auto bad = [&](std::string_view why) {
    return fail(Errc::malformed,
                fmt::format("{} line {}: {}: {}", file, line_no, why, quote_for_message(line)));
  };
  const std::size_t semi = line.find(';');
  if (semi == std::string_view::npos) return bad("no ';' after the record header");
  const auto fields = split(line.substr(0, semi), ',');
  if (fields.size() < 3) return bad("expected priority,sequence,timestamp");
  const auto prio = parse_u64(fields[0]);
  const auto seq = parse_u64(fields[1]);
  const auto ts = parse_u64(fields[2]);
  if (!prio || !seq || !ts) return bad("header field is not a number");
  KernelLogRecord r;
  r.priority = static_cast<unsigned>(*prio & 7U);
  r.facility = static_cast<unsigned>((*prio >> 3U) & 0xffU);
  r.seq = *seq;
  r.timestamp_us = *ts;
  std::string_view message = line.substr(semi + 1);
  if (message.ends_with('\r')) message.remove_suffix(1);
  r.message = std::string(message);
  return r;
}

// "[  812.345678]" at the start of s -> microseconds and the rest.
std::optional<std::pair<std::uint64_t, std::string_view>> leading_uptime(std::string_view s) {
  if (!s.starts_with('[')) return std::nullopt;
  const std::size_t close = s.find(']');
  if (close == std::string_view::npos) return std::nullopt;
  const std::string_view inside = trim(s.substr(1, close - 1));
  const std::size_t dot = inside.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const auto secs = parse_u64(inside.substr(0, dot));
  std::string_view frac = inside.substr(dot + 1);
  if (!secs || frac.empty() || frac.size() > 9) return std::nullopt;
  auto frac_value = parse_u64(frac);
  if (!frac_value) return std::nullopt;
  std::uint64_t micros = *frac_value;
  for (std::size_t i = frac.size(); i < 6; ++i) micros *= 10;
  for (std::size_t i = 6; i < frac.size(); ++i) micros /= 10;
  std::string_view rest = s.substr(close + 1);
  if (rest.starts_with(' ')) rest.remove_prefix(1);
  return std::make_pair(*secs * 1000000 + micros, rest);
}

Errc errno_code(int err) {
  if (err == ENOENT || err == ENOTDIR) return Errc::not_found;
  if (err == EACCES || err == EPERM) return Errc::permission_denied;
  return Errc::io;
}

Error errno_error(int err, const std::string& path, std::string_view verb) {
  return Error{errno_code(err), fmt::format("{}: cannot {}: {}", path, verb, std::strerror(err))};
}

// Keeps the newest records whose messages total at most max_bytes.
class Bounded {
 public:
  explicit Bounded(std::size_t max_bytes) : max_bytes_(max_bytes) {}
  void push(KernelLogRecord r) {
    bytes_ += r.message.size();
    records_.push_back(std::move(r));
    while (bytes_ > max_bytes_ && !records_.empty()) {
      bytes_ -= records_.front().message.size();
      records_.pop_front();
      truncated_ = true;
    }
  }
  void finish(KernelLog& log) {
    log.records.assign(std::make_move_iterator(records_.begin()),
                       std::make_move_iterator(records_.end()));
    log.truncated = log.truncated || truncated_;
  }

 private:
  std::size_t max_bytes_;
  std::size_t bytes_ = 0;
  bool truncated_ = false;
  std::deque<KernelLogRecord> records_;
};

// The last max_bytes of a regular file, starting at a line boundary. Sets *cut when it skipped.
Result<std::string> read_tail(int fd, const std::string& path, std::size_t max_bytes, bool* cut) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return tl::unexpected(errno_error(errno, path, "stat"));
  const auto size = static_cast<std::uint64_t>(st.st_size);
  std::uint64_t offset = size > max_bytes ? size - max_bytes : 0;
  std::string out;
  out.resize(static_cast<std::size_t>(size - offset));
  std::size_t got = 0;
  while (got < out.size()) {
    const ssize_t n =
        ::pread(fd, out.data() + got, out.size() - got, static_cast<off_t>(offset + got));
    if (n < 0) {
      if (errno == EINTR) continue;
      return tl::unexpected(errno_error(errno, path, "read"));
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  out.resize(got);
  *cut = offset > 0;
  if (offset > 0) {
    const std::size_t nl = out.find('\n');
    out.erase(0, nl == std::string::npos ? out.size() : nl + 1);
  }
  return out;
}

Status read_kmsg_device(int fd, const std::string& path, Bounded& keep) {
  // Each read() returns exactly one record; the buffer must hold the longest one (~8 KiB with its
  // dictionary), else EINVAL.
  std::string buf(16384, '\0');
  std::size_t record_no = 0;
  while (true) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EAGAIN) return {};
      if (errno == EINTR || errno == EPIPE) continue;  // EPIPE: records overwritten while reading
      return tl::unexpected(errno_error(errno, path, "read"));
    }
    if (n == 0) return {};
    ++record_no;
    std::string_view record(buf.data(), static_cast<std::size_t>(n));
    const std::size_t nl = record.find('\n');
    auto parsed = parse_kmsg_record(record.substr(0, nl), path, record_no);
    if (!parsed) return tl::unexpected(parsed.error());
    keep.push(std::move(*parsed));
  }
}

}  // namespace

Result<std::vector<KernelLogRecord>> parse_kmsg(std::string_view text, std::string_view file) {
  std::vector<KernelLogRecord> out;
  std::size_t line_no = 0;
  for (const std::string_view line : split_lines(text)) {
    ++line_no;
    if (line.empty() || line.front() == ' ') continue;  // dictionary continuation
    auto r = parse_kmsg_record(line, file, line_no);
    if (!r) return tl::unexpected(r.error());
    out.push_back(std::move(*r));
  }
  return out;
}

std::vector<KernelLogRecord> parse_kern_log(std::string_view text) {
  std::vector<KernelLogRecord> out;
  for (std::string_view line : split_lines(text)) {
    if (line.ends_with('\r')) line.remove_suffix(1);
    if (trim(line).empty()) continue;
    KernelLogRecord r;
    std::string_view message = line;
    const std::size_t tag = line.find(" kernel: ");
    if (tag != std::string_view::npos) message = line.substr(tag + 9);
    if (const auto uptime = leading_uptime(message)) {
      r.timestamp_us = uptime->first;
      message = uptime->second;
    }
    r.message = std::string(message);
    out.push_back(std::move(r));
  }
  return out;
}

Result<std::optional<KernelLog>> read_kernel_log(const HostRoot& root, std::size_t max_bytes) {
  KernelLog log;
  Bounded keep(max_bytes);
  const std::string kmsg = root.resolve("/dev/kmsg").string();
  std::optional<Error> kmsg_error;
  {
    Fd fd(::open(kmsg.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    struct stat st {};
    if (fd.get() < 0) {
      kmsg_error = errno_error(errno, kmsg, "open");
    } else if (::fstat(fd.get(), &st) != 0) {
      kmsg_error = errno_error(errno, kmsg, "stat");
    } else if (S_ISCHR(st.st_mode)) {
      if (auto status = read_kmsg_device(fd.get(), kmsg, keep); !status) {
        kmsg_error = status.error();
      } else {
        log.source = KernelLogSource::kmsg;
        keep.finish(log);
        return std::optional<KernelLog>(std::move(log));
      }
    } else if (!S_ISREG(st.st_mode)) {
      kmsg_error = Error{Errc::io, fmt::format("{}: neither a character device nor a file", kmsg)};
    } else {
      bool cut = false;
      auto text = read_tail(fd.get(), kmsg, max_bytes, &cut);
      if (!text) return tl::unexpected(text.error());
      auto records = parse_kmsg(*text, kmsg);
      if (!records) return tl::unexpected(records.error());
      for (auto& r : *records) keep.push(std::move(r));
      log.source = KernelLogSource::kmsg;
      log.truncated = cut;
      keep.finish(log);
      return std::optional<KernelLog>(std::move(log));
    }
  }
  const std::string file = root.resolve("/var/log/kern.log").string();
  // O_NONBLOCK: a FIFO planted in a captured root must not hang the reader at open().
  Fd fd(::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  struct stat file_st {};
  if (fd.get() >= 0 && (::fstat(fd.get(), &file_st) != 0 || !S_ISREG(file_st.st_mode))) {
    return fail(Errc::invalid_argument, fmt::format("{}: not a regular file", file));
  }
  if (fd.get() < 0) {
    const Error file_error = errno_error(errno, file, "open");
    if (kmsg_error->code == Errc::not_found && file_error.code == Errc::not_found) {
      return std::optional<KernelLog>();
    }
    const Error& worst = kmsg_error->code != Errc::not_found ? *kmsg_error : file_error;
    return fail(worst.code, fmt::format("kernel log unavailable: {}; {}", kmsg_error->detail,
                                        file_error.detail));
  }
  bool cut = false;
  auto text = read_tail(fd.get(), file, max_bytes, &cut);
  if (!text) return tl::unexpected(text.error());
  log.source = KernelLogSource::kern_log_file;
  if (kmsg_error->code != Errc::not_found) {
    log.notes.push_back(fmt::format("{}; read /var/log/kern.log instead", kmsg_error->detail));
  }
  for (auto& r : parse_kern_log(*text)) keep.push(std::move(r));
  log.truncated = cut;
  keep.finish(log);
  return std::optional<KernelLog>(std::move(log));
}

}  // namespace sparkops::host
