#pragma once
// Where the job's output goes in `sparkops watch`: the terminal first, unchanged (child stdout to
// our stdout, child stderr to our stderr), then the log file (both streams, in arrival order) and
// its
// `.times` sidecar (trainlog/sidecar.hpp: one `<ISO-8601 UTC ms>\t<offset>` line per record start
// whose arrival millisecond differs from the previous entry's). The terminal never waits on the
// files: when a file write fails (disk full), the files are abandoned and the failure is reported
// once; the job's output keeps reaching the terminal.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "base/clock.hpp"
#include "base/output_file.hpp"
#include "base/result.hpp"

namespace sparkops::watch {

class OutputSink {
 public:
  // Opens the log and the sidecar for appending (created when missing) with base/output_file.hpp's
  // rules: never through a symlink, never a FIFO or a multiply linked file, the directory checked
  // unless `trust` says otherwise (conflict with one line). Sidecar offsets count from the log's
  // first byte, so appending to an existing log keeps them right.
  static Result<OutputSink> open(const std::filesystem::path& log,
                                 const std::filesystem::path& sidecar,
                                 OutputTrust trust = OutputTrust::checked);

  OutputSink(OutputSink&& other) noexcept;
  OutputSink& operator=(OutputSink&&) = delete;
  OutputSink(const OutputSink&) = delete;
  OutputSink& operator=(const OutputSink&) = delete;
  ~OutputSink();

  // The most bytes this session writes to the log (watch.max_log_bytes). A chunk that would pass
  // it is not written: the log and the sidecar stop there, reported once like a failed write.
  void set_max_bytes(std::uint64_t max_bytes) { max_bytes_ = max_bytes; }

  // `stream` is 1 (stdout) or 2 (stderr). Returns the log offset of the chunk's first byte.
  std::uint64_t forward(int stream, std::string_view data, SystemTime arrival);
  // Writes the sidecar lines gathered so far (one write per poll round).
  void flush_sidecar();
  // fsyncs the files (at exit).
  void sync();

  // The first file failure, once: a line for the user. nullopt when nothing new failed.
  std::optional<std::string> take_failure();
  bool files_failed() const { return failed_; }
  bool terminal_failed(int stream) const { return stream == 1 ? out_dead_ : err_dead_; }
  std::uint64_t bytes() const { return offset_ - base_; }  // forwarded by this session

 private:
  OutputSink() = default;
  void fail_files(std::string_view what, std::string_view reason);
  void to_terminal(int stream, std::string_view data);

  std::filesystem::path log_path_;
  int log_fd_ = -1;
  int sidecar_fd_ = -1;
  std::uint64_t base_ = 0;    // log size when opened
  std::uint64_t offset_ = 0;  // log offset of the next byte
  std::uint64_t max_bytes_ = UINT64_MAX;
  bool at_record_start_ = true;
  std::int64_t last_entry_ms_ = -1;
  std::string sidecar_buf_;
  bool failed_ = false;
  std::optional<std::string> failure_;
  bool out_dead_ = false;
  bool err_dead_ = false;
};

// Splits one stream into records (ending at '\n' or '\r', as RecordReader does) for the parsers.
// A record longer than `max_record_bytes` is passed on in pieces of that size.
class RecordSplitter {
 public:
  using Sink = std::function<void(std::string_view record, std::uint64_t offset)>;
  explicit RecordSplitter(std::size_t max_record_bytes = 1 << 20) : max_(max_record_bytes) {}
  // `offset`: the log offset of data[0].
  void feed(std::string_view data, std::uint64_t offset, const Sink& sink);
  // Passes on a last record without terminator.
  void finish(const Sink& sink);

 private:
  std::size_t max_;
  std::string partial_;
  std::uint64_t partial_offset_ = 0;
};

}  // namespace sparkops::watch
