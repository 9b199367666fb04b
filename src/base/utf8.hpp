#pragma once
// The one rule for text that came from the machine or a user (process names, command lines, sensor
// names, kernel-log victims, paths): it is bytes, not UTF-8. Every writer (JSON, Prometheus, the
// human tables, error lines) passes it through this rule at the edge, so all outputs agree:
//
//   each maximal subpart of an ill-formed sequence becomes one U+FFFD
//
// ("substitution of maximal subparts", Unicode 15 §3.9 U+FFFD practice; it is also exactly what
// nlohmann::json's dump(..., error_handler_t::replace) does, so `dump_json` in base/json_text.hpp
// and sanitize_utf8 never disagree). Overlongs (C0, C1, E0 80..9F, F0 80..8F), surrogates
// (ED A0..BF), code points above U+10FFFF (F4 90.., F5..FF) and truncated sequences are ill-formed.

#include <cstddef>
#include <string>
#include <string_view>

namespace sparkops {

inline constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";  // U+FFFD

bool is_valid_utf8(std::string_view s);

// `s` with ill-formed sequences replaced; valid input is returned unchanged.
std::string sanitize_utf8(std::string_view s);

// For terminals: sanitize_utf8, then every control character except '\n' and '\t' (C0, DEL and
// the C1 range U+0080..U+009F, which terminals also interpret) becomes U+FFFD, so a process named
// "\x1b]0;..." cannot drive the user's terminal.
std::string terminal_text(std::string_view s);

// The longest prefix of `s` of at most `max_bytes` bytes that does not end inside a well-formed
// multi-byte sequence (cutting a name never manufactures an ill-formed one).
std::string_view utf8_prefix(std::string_view s, std::size_t max_bytes);

}  // namespace sparkops
