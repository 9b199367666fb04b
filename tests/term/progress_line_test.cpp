// The one progress reporter (term/progress_line.hpp) on a ManualClock: at most ten draws a
// second, a share and an ETA when the total is known, nothing when disabled, cleared at the end.

#include "term/progress_line.hpp"

#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "base/clock.hpp"

namespace sparkops::term {
namespace {

using namespace std::chrono_literals;

constexpr std::string_view kClear = "\x1b[K";

// Everything written to a FILE* so far.
std::string contents(std::FILE* f) {
  std::fflush(f);
  std::string out;
  std::rewind(f);
  char buf[4096];
  while (const auto n = std::fread(buf, 1, sizeof buf, f)) out.append(buf, n);
  std::fseek(f, 0, SEEK_END);
  return out;
}

struct TmpFile {
  std::FILE* f = std::tmpfile();
  ~TmpFile() { std::fclose(f); }
};

TEST(ProgressLine, DrawsAtMostTenTimesASecondAndClearsAtTheEnd) {
  TmpFile out;
  ManualClock clock;
  {
    ProgressLine line(out.f, true, "train.log", 1000ULL << 20, clock);
    line.update(0);  // the first update draws
    EXPECT_EQ(contents(out.f), "\rtrain.log: 0 B of 1000.0 MiB (0%)" + std::string(kClear));
    clock.advance(50ms);
    line.update(100ULL << 20);  // within 100 ms: not redrawn
    EXPECT_EQ(contents(out.f).find("100.0 MiB"), std::string::npos);
    clock.advance(50ms);
    line.update(100ULL << 20);  // 100 ms after the last draw: 100 MiB in 0.1 s
    EXPECT_NE(contents(out.f).find("\rtrain.log: 100.0 MiB of 1000.0 MiB (10%), 1000.0 MiB/s, "
                                   "0.9s left" +
                                   std::string(kClear)),
              std::string::npos)
        << contents(out.f);
  }
  const std::string all = contents(out.f);
  EXPECT_EQ(all.substr(all.size() - 1 - kClear.size()), "\r" + std::string(kClear));
}

TEST(ProgressLine, DisabledWritesNothing) {
  TmpFile out;
  ManualClock clock;
  {
    ProgressLine line(out.f, false, "train.log", 1000, clock);
    line.update(10);
    clock.advance(1s);
    line.update(500);
    line.finish();
  }
  EXPECT_EQ(contents(out.f), "");
}

TEST(ProgressLine, WithoutATotalShowsBytesAndRate) {
  TmpFile out;
  ManualClock clock;
  ProgressLine line(out.f, true, "stdin", std::nullopt, clock);
  EXPECT_EQ(line.text(3ULL << 20, 2s), "stdin: 3.0 MiB, 1.5 MiB/s");
  EXPECT_EQ(line.text(0, 0s), "stdin: 0 B");
}

}  // namespace
}  // namespace sparkops::term
