#pragma once
// RecordReader: streams a log as records in bounded memory. A record ends at '\n' or '\r' (tqdm
// redraws its bar after '\r', so each redraw is its own record); empty records are skipped. A
// record longer than `max_record_bytes` is returned in pieces of that size (counted in overlong()),
// so a 50 MB line costs at most one buffer.

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "base/clock.hpp"
#include "base/result.hpp"

namespace sparkops::trainlog {

struct LogLine {
  std::string_view text;              // without its terminator; valid until the next next()
  std::uint64_t offset = 0;           // byte offset of the record's first byte in the input
  std::optional<SystemTime> stamped;  // when the record was written (from the .times sidecar)
};

class RecordReader {
 public:
  static constexpr std::size_t kDefaultMaxRecord = 1 << 20;

  // Errors: not_found / permission_denied / io, naming the path.
  static Result<RecordReader> open_file(const std::filesystem::path& path,
                                        std::size_t max_record_bytes = kDefaultMaxRecord);
  static RecordReader from_text(std::string_view text,
                                std::size_t max_record_bytes = kDefaultMaxRecord);

  // The next record; false at the end of the input (a torn last line is still returned).
  bool next(LogLine& out);

  std::uint64_t bytes_read() const { return bytes_read_; }
  std::uint64_t overlong() const { return overlong_; }
  bool read_error() const { return read_error_; }

 private:
  struct FileCloser {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  RecordReader() = default;
  bool refill();
  // The index of the first `c` at or after begin_, or end_ when data_ holds none yet. `known`
  // carries the last search between calls: data_[begin_, known) holds no `c`, and known < end_
  // means data_[known] == c. A tqdm bar redraws after '\r' many times per '\n' (or never writes
  // one): searching again from every record's start rescanned up to the whole buffer per record;
  // this way each byte is searched once for each separator.
  std::size_t find_from(char c, std::size_t& known);

  std::unique_ptr<std::FILE, FileCloser> file_;
  std::vector<char> buf_;
  const char* data_ = nullptr;  // buf_.data() for files, the caller's text otherwise
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  std::uint64_t data_offset_ = 0;  // input offset of data_[0]
  std::uint64_t bytes_read_ = 0;
  std::uint64_t overlong_ = 0;
  std::size_t max_record_ = kDefaultMaxRecord;
  bool eof_ = false;
  bool in_overlong_ = false;
  bool read_error_ = false;
  std::size_t next_cr_ = 0;  // find_from's state for '\r'
  std::size_t next_nl_ = 0;  // and for '\n'
};

}  // namespace sparkops::trainlog
