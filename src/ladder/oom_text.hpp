#pragma once
// The "dense" text view the OOM classifier matches on, and the pure helpers that read facts out of
// it. Dense text is the input with every whitespace run, line break (real, `\r`, or a literal "\n"
// from a JSON-escaped log) and line-leading comment/quote marker (# // > * ;) removed, ASCII
// lowercased. Wrapped lines, collapsed newlines, comment prefixes and progress-bar `\r` updates
// therefore all read the same: "CUDA out of mem\n  ory" and "# CUDA out of memory" are both
// "cudaoutofmemory". `orig` keeps the original case at the same offsets, and `flags` records where
// whitespace or a line break was removed, so names can be rebuilt with their spaces.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sparkops::ladder::oomtext {

inline constexpr unsigned char kSpaceBefore = 1;  // whitespace or a line break preceded this byte
inline constexpr unsigned char kLineStart = 2;    // first byte of a line

struct DenseView {
  std::string_view lower;
  std::string_view orig;
  std::string_view flags;  // one byte per position: kSpaceBefore | kLineStart
};

struct DenseText {
  std::string lower;
  std::string orig;
  std::string flags;
  DenseView view() const { return {lower, orig, flags}; }
  std::size_t size() const { return lower.size(); }
};

// Turns raw text into dense text incrementally: feed() appends to `out` whatever the chunk
// completes; a chunk may end anywhere (inside a line, between '\\' and 'n'). Keeps O(1) state.
class DenseNormalizer {
 public:
  void feed(std::string_view chunk, DenseText& out);
  void finish(DenseText& out);  // flushes a trailing lone backslash

 private:
  void put(char c, DenseText& out);
  // Updates the line/space state for c; true (with its lowercase form and flag) when c is kept.
  bool classify(char c, char& lower, char& flag);
  bool line_start_ = true;
  bool pending_space_ = false;
  bool pending_line_ = true;
  bool pending_backslash_ = false;
};

// The whole text at once (tests, small inputs).
DenseText make_dense(std::string_view text);

// How a bare "GB"/"MB" is read: SI (10^9) as most tools print, or binary where the producer is
// known to format with 1024 (PyTorch's MPS allocator message).
enum class SiPrefix { decimal, binary };
// What a number without a unit means.
enum class BareNumber { rejected, bytes };

// A size written at `pos` in dense lowercase text ("3.75gib", "(44.0gib", ":17.36gb"); leading
// '(' ':' '=' are skipped. Negative numbers are rejected (vLLM's "-0.3 GiB" is not a size).
std::optional<std::uint64_t> quantity_at(std::string_view lower, std::size_t pos, SiPrefix si,
                                         BareNumber bare = BareNumber::rejected);
// A size that ends right before `pos` ("3.75gib" in "3.75gibfree;").
std::optional<std::uint64_t> quantity_before(std::string_view lower, std::size_t pos, SiPrefix si);
// Decimal digits at pos (after skipping '(' ':' '=' '#').
std::optional<std::uint32_t> pid_at(std::string_view lower, std::size_t pos);
enum class TokenEnd { stop_char, stop_char_or_space };
// The original-case text from pos up to the first byte in `stops` (or removed whitespace, with
// TokenEnd::stop_char_or_space), removed whitespace restored as single spaces; at most max bytes.
std::string token_at(const DenseView& v, std::size_t pos, std::string_view stops, TokenEnd end,
                     std::size_t max = 64);
// The line of `v` that contains pos, rebuilt from the original bytes with every removed whitespace
// run as one space (leading comment/quote markers stay removed), made valid UTF-8 and cut to at
// most max bytes without splitting a character. Looks at most max_scan bytes either side of pos.
std::string line_at(const DenseView& v, std::size_t pos, std::size_t max,
                    std::size_t max_scan = 1024);

}  // namespace sparkops::ladder::oomtext
