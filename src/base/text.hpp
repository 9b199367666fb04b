#pragma once
// Locale-free text helpers shared by every parser: std::from_chars, no allocation where avoidable.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sparkops {

std::string_view trim(std::string_view s);
bool starts_with(std::string_view s, std::string_view prefix);
bool ends_with(std::string_view s, std::string_view suffix);
bool contains(std::string_view s, std::string_view needle);
bool icontains(std::string_view s, std::string_view needle);  // ASCII case-insensitive
std::string to_lower(std::string_view s);

// Splits on `sep`, keeping empty fields ("a,,b" -> {"a","","b"}).
std::vector<std::string_view> split(std::string_view s, char sep);
// Splits on runs of spaces/tabs, dropping empties.
std::vector<std::string_view> split_ws(std::string_view s);
// Lines without their '\n' (a trailing '\r' is kept; callers that care trim it).
std::vector<std::string_view> split_lines(std::string_view s);

// Whole-string numeric parses (after trim); nullopt on any junk, overflow or empty input.
std::optional<std::uint64_t> parse_u64(std::string_view s);
std::optional<std::int64_t> parse_i64(std::string_view s);
std::optional<double> parse_double(std::string_view s);
// An integral double (a JSON number such as 10 or 10.0) as an integer; nullopt for NaN, infinities,
// fractions and magnitudes above 2^53, past which a double no longer holds every integer (and a
// cast to int64 past 2^63 is undefined behaviour).
std::optional<std::int64_t> exact_integer(double v);
// Hex with or without 0x prefix.
std::optional<std::uint64_t> parse_hex_u64(std::string_view s);

// Leading-number parse: the number at the start of s (after spaces) and what follows.
struct LeadingNumber {
  double value;
  std::string_view rest;
};
std::optional<LeadingNumber> parse_leading_double(std::string_view s);

// Printable single-line form of untrusted text for error messages: control bytes escaped, cut to
// max.
std::string quote_for_message(std::string_view s, std::size_t max = 80);

}  // namespace sparkops
