#include "trainlog/record_reader.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace sparkops::trainlog {

namespace {

constexpr std::size_t kChunk = 1 << 20;

}  // namespace

Result<RecordReader> RecordReader::open_file(const std::filesystem::path& path,
                                             std::size_t max_record_bytes) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    const int e = errno;
    const Errc code = e == ENOENT                   ? Errc::not_found
                      : (e == EACCES || e == EPERM) ? Errc::permission_denied
                                                    : Errc::io;
    return fail(code, fmt::format("{}: {}", path.string(), std::strerror(e)));
  }
  RecordReader r;
  r.file_.reset(f);
  r.max_record_ = max_record_bytes == 0 ? kDefaultMaxRecord : max_record_bytes;
  r.buf_.resize(r.max_record_ + kChunk);
  r.data_ = r.buf_.data();
  return r;
}

RecordReader RecordReader::from_text(std::string_view text, std::size_t max_record_bytes) {
  RecordReader r;
  r.max_record_ = max_record_bytes == 0 ? kDefaultMaxRecord : max_record_bytes;
  r.data_ = text.data();
  r.end_ = text.size();
  r.bytes_read_ = text.size();
  r.eof_ = true;
  return r;
}

bool RecordReader::refill() {
  if (eof_ || !file_) return false;
  if (begin_ > 0) {
    std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
    next_cr_ = next_cr_ >= begin_ ? next_cr_ - begin_ : 0;
    next_nl_ = next_nl_ >= begin_ ? next_nl_ - begin_ : 0;
    data_offset_ += begin_;
    end_ -= begin_;
    begin_ = 0;
  }
  const std::size_t room = buf_.size() - end_;
  if (room == 0) return false;
  const std::size_t got = std::fread(buf_.data() + end_, 1, room, file_.get());
  if (got == 0) {
    if (std::ferror(file_.get())) read_error_ = true;
    eof_ = true;
    return false;
  }
  end_ += got;
  bytes_read_ += got;
  return true;
}

std::size_t RecordReader::find_from(char c, std::size_t& known) {
  if (known < begin_) known = begin_;
  if (known < end_ && data_[known] != c) {
    const auto* hit = static_cast<const char*>(std::memchr(data_ + known, c, end_ - known));
    known = hit ? static_cast<std::size_t>(hit - data_) : end_;
  }
  return known;
}

bool RecordReader::next(LogLine& out) {
  for (;;) {
    const std::size_t avail = end_ - begin_;
    const char* start = data_ + begin_;
    // A record ends at the first '\r' or '\n'.
    const std::size_t at = std::min(find_from('\r', next_cr_), find_from('\n', next_nl_));
    const char* sep = at < end_ ? data_ + at : nullptr;
    if (sep) {
      const auto len = static_cast<std::size_t>(sep - start);
      const std::uint64_t offset = data_offset_ + begin_;
      begin_ += len + 1;
      const bool was_overlong = in_overlong_;
      in_overlong_ = false;
      if (len > max_record_) {
        if (!was_overlong) ++overlong_;
        out.text = std::string_view(start, max_record_);
        out.offset = offset;
        begin_ = static_cast<std::size_t>(offset - data_offset_) + max_record_;
        in_overlong_ = true;
        return true;
      }
      if (len == 0) continue;
      out.text = std::string_view(start, len);
      out.offset = offset;
      return true;
    }
    if (avail >= max_record_) {
      if (!in_overlong_) ++overlong_;
      in_overlong_ = true;
      out.text = std::string_view(start, max_record_);
      out.offset = data_offset_ + begin_;
      begin_ += max_record_;
      return true;
    }
    if (refill()) continue;
    if (avail == 0) return false;
    out.text = std::string_view(start, avail);
    out.offset = data_offset_ + begin_;
    begin_ = end_;
    in_overlong_ = false;
    return true;
  }
}

}  // namespace sparkops::trainlog
