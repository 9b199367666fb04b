#pragma once
// The timestamp sidecar `sparkops watch` writes beside a log it tees: `<log>.times`, one line per
// log record: `<ISO-8601 UTC with ms>\t<byte offset of the record's first byte>`, e.g.
//   2025-11-09T09:26:12.345Z\t10482
// Offsets are non-decreasing. A record's time is that of the entry with the greatest offset not
// after the record's offset. Malformed lines are counted and skipped; a torn last line is ignored.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>

#include "base/clock.hpp"
#include "base/result.hpp"
#include "trainlog/record_reader.hpp"

namespace sparkops::trainlog {

struct SidecarEntry {
  SystemTime time;
  std::uint64_t offset = 0;
};

// Parses one sidecar line; nullopt when it is not `<timestamp>\t<offset>`.
std::optional<SidecarEntry> parse_sidecar_line(std::string_view line);

// Walks a sidecar in step with the log (bounded memory: one entry of look-ahead).
class SidecarCursor {
 public:
  explicit SidecarCursor(RecordReader reader) : reader_(std::move(reader)) {}

  // The time for a record starting at `offset`; offsets must be non-decreasing between calls.
  // A record inside an entry's span (a '\r' redraw within a stamped line) gets that entry's time.
  std::optional<SystemTime> time_at(std::uint64_t offset);

  std::uint64_t malformed() const { return malformed_; }
  std::uint64_t backwards() const { return backwards_; }
  // True when entries remain past the last record asked about (a sidecar for a longer log).
  bool has_unused_entries() const { return ahead_.has_value(); }

 private:
  std::optional<SidecarEntry> read_entry();

  RecordReader reader_;
  std::optional<SidecarEntry> current_;
  std::optional<SidecarEntry> ahead_;
  bool started_ = false;
  std::uint64_t malformed_ = 0;
  std::uint64_t backwards_ = 0;
};

}  // namespace sparkops::trainlog
