#pragma once
// Where a command writes, and the exit codes every command shares (README "Exit codes"). Engines
// below cli/ (the sample loop, the watch session) print through a Console so tests can capture
// both streams; cli/ decides what the streams are.

#include <cstdio>
#include <string_view>

namespace sparkops {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;    // the command ran and the answer is "no" / it failed
inline constexpr int kExitBadInput = 2;   // bad flag, file or value: one line on stderr
inline constexpr int kExitTight = 3;      // it fits, with less than the configured margin
inline constexpr int kExitInternal = 70;  // a bug (EX_SOFTWARE)

struct Console {
  std::FILE* out = stdout;  // the command's result
  std::FILE* err = stderr;  // progress, warnings, problems
};

// Prints "sparkops: <message>" on io.err, one line.
void print_error(const Console& io, std::string_view message);

}  // namespace sparkops
