#include "base/utf8.hpp"

namespace sparkops {

namespace {

// Length of the well-formed sequence starting at s[i], or 0 when it is ill-formed; `consumed` is
// then the length of its maximal subpart (at least 1): the bytes one U+FFFD replaces.
std::size_t sequence_length(std::string_view s, std::size_t i, std::size_t& consumed) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b0 = byte(i);
  consumed = 1;
  if (b0 < 0x80) return 1;
  std::size_t len = 0;
  unsigned char lo = 0x80;
  unsigned char hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
  } else if (b0 == 0xE0) {
    len = 3;
    lo = 0xA0;
  } else if ((b0 >= 0xE1 && b0 <= 0xEC) || b0 == 0xEE || b0 == 0xEF) {
    len = 3;
  } else if (b0 == 0xED) {
    len = 3;
    hi = 0x9F;
  } else if (b0 == 0xF0) {
    len = 4;
    lo = 0x90;
  } else if (b0 >= 0xF1 && b0 <= 0xF3) {
    len = 4;
  } else if (b0 == 0xF4) {
    len = 4;
    hi = 0x8F;
  } else {
    return 0;  // 80..C1 (continuation or overlong lead), F5..FF
  }
  for (std::size_t k = 1; k < len; ++k) {
    if (i + k >= s.size()) return 0;  // truncated: the subpart so far is one U+FFFD
    const unsigned char b = byte(i + k);
    const unsigned char min = k == 1 ? lo : 0x80;
    const unsigned char max = k == 1 ? hi : 0xBF;
    if (b < min || b > max) return 0;  // this byte starts afresh
    consumed = k + 1;
  }
  return len;
}

}  // namespace

bool is_valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    std::size_t consumed = 0;
    const std::size_t len = sequence_length(s, i, consumed);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

std::string sanitize_utf8(std::string_view s) {
  if (is_valid_utf8(s)) return std::string(s);
  std::string out;
  out.reserve(s.size() + 8);
  for (std::size_t i = 0; i < s.size();) {
    std::size_t consumed = 0;
    const std::size_t len = sequence_length(s, i, consumed);
    if (len == 0) {
      out += kReplacementCharacter;
      i += consumed;
    } else {
      out.append(s.substr(i, len));
      i += len;
    }
  }
  return out;
}

std::string terminal_text(std::string_view s) {
  const std::string clean = sanitize_utf8(s);
  std::string out;
  out.reserve(clean.size());
  for (std::size_t i = 0; i < clean.size(); ++i) {
    const auto b = static_cast<unsigned char>(clean[i]);
    if ((b < 0x20 && b != '\n' && b != '\t') || b == 0x7F) {
      out += kReplacementCharacter;
    } else if (b == 0xC2 && i + 1 < clean.size() &&
               static_cast<unsigned char>(clean[i + 1]) <= 0x9F) {
      out += kReplacementCharacter;  // C1 control U+0080..U+009F (C2 80..C2 9F)
      ++i;
    } else {
      out += clean[i];
    }
  }
  return out;
}

std::string_view utf8_prefix(std::string_view s, std::size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  std::size_t end = 0;
  for (std::size_t i = 0; i < s.size();) {
    std::size_t consumed = 0;
    const std::size_t len = sequence_length(s, i, consumed);
    const std::size_t step = len == 0 ? consumed : len;
    if (i + step > max_bytes) break;
    i += step;
    end = i;
  }
  return s.substr(0, end);
}

}  // namespace sparkops
