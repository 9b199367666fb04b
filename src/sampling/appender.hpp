#pragma once
// DurableAppender: the sample file that never loses a completed row (the contract
// docs/csv-format.md and docs/reliability.md promise).
//  - Each row is one write() on an O_APPEND descriptor, so a crash (even SIGKILL) leaves whole
//  rows.
//  - fsync every `fsync_every` rows.
//  - Opening an existing file: its header must be the expected one (else conflict, never mix
//    formats); a torn last line (a crash or power loss mid-write) is cut off before appending.
//  - A failed or short write (disk full, I/O error): the row is kept in memory (at most
//    `memory_buffer_rows`, oldest dropped first and counted), the file is restored to its last
//    whole row, and every later append retries the backlog first, in order.
//  - reopen(): close and open the path again (logrotate moved it; SIGHUP).
// Not thread-safe. Never prints: outcomes are returned for cli/ to report.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <sys/types.h>

#include "base/output_file.hpp"
#include "base/result.hpp"
#include "config/run_sections.hpp"

namespace sparkops::sampling {

// The write(2) seam: tests inject failures (ENOSPC, short writes).
using WriteFn = std::function<ssize_t(int fd, const void* data, std::size_t size)>;

struct AppenderOptions {
  // rows; 0 = never fsync (defaults: config/run_sections.hpp)
  std::size_t fsync_every = static_cast<std::size_t>(config::SampleSettings{}.fsync_every);
  std::size_t memory_buffer_rows =
      static_cast<std::size_t>(config::SampleSettings{}.memory_buffer_rows);
  WriteFn write;  // empty = ::write
  // The file is opened with base/output_file.hpp's rules: never through a symlink, never a FIFO or
  // a multiply linked file; the directory checked unless trusted (--trust-output-path).
  OutputTrust trust = OutputTrust::checked;
};

// What opening found, for the caller to report.
struct OpenReport {
  bool created = false;              // new or empty file: the header was written
  std::uint64_t torn_bytes_cut = 0;  // bytes of an incomplete last line removed
};

// What one append did. `failed_now` is set on the first failure after a good state (print one
// line), `recovered` when a backlog was fully written again.
struct AppendReport {
  std::optional<Error> failed_now;
  bool recovered = false;
  std::size_t buffered_rows = 0;   // rows waiting in memory after this call
  std::uint64_t dropped_rows = 0;  // total rows dropped because the buffer was full
};

class DurableAppender {
 public:
  // `header` is written to a new or empty file; `restart_marker` is appended after the checks when
  // the file already had content (may be empty). `check_header` validates the first lines of an
  // existing file (see writers.hpp check_existing_header).
  using HeaderCheck = std::function<Status(std::string_view head)>;
  static Result<DurableAppender> open(std::filesystem::path path, std::string header,
                                      std::string restart_marker, HeaderCheck check_header,
                                      AppenderOptions options, OpenReport* report = nullptr);

  DurableAppender(DurableAppender&& other) noexcept;
  DurableAppender& operator=(DurableAppender&& other) noexcept;
  DurableAppender(const DurableAppender&) = delete;
  DurableAppender& operator=(const DurableAppender&) = delete;
  ~DurableAppender();

  // Appends one complete row (must end in '\n'). Never throws on I/O errors.
  AppendReport append(std::string row);
  // Retries the backlog without adding a row.
  AppendReport retry();
  // Closes and reopens the path (header rules as in open). On error the old descriptor is kept.
  Result<OpenReport> reopen();
  // fsyncs now (at exit).
  Status sync();

  const std::filesystem::path& path() const { return path_; }
  std::size_t buffered_rows() const { return backlog_.size(); }
  // Rows (not the header or a restart marker) that reached the file since open: what a summary
  // may call written. Rows still buffered or dropped (dropped_rows) are not among them.
  std::uint64_t written_rows() const { return written_rows_; }
  std::uint64_t dropped_rows() const { return dropped_rows_; }

 private:
  DurableAppender() = default;
  Result<OpenReport> open_fd();
  bool write_one(const std::string& row, Error* error);
  AppendReport drain(std::optional<std::string> row);

  std::filesystem::path path_;
  std::string header_;
  std::string restart_marker_;
  HeaderCheck check_header_;
  AppenderOptions options_;
  int fd_ = -1;
  std::uint64_t size_ = 0;  // bytes of whole rows in the file, as far as we wrote them
  std::size_t rows_since_sync_ = 0;
  std::deque<std::string> backlog_;  // rows (or the header) not yet written, in order
  bool failing_ = false;
  bool header_pending_ = false;  // backlog_.front() is the header or restart marker
  std::uint64_t dropped_rows_ = 0;
  std::uint64_t written_rows_ = 0;
};

}  // namespace sparkops::sampling
