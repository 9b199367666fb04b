#pragma once
// Pressure stall information: /proc/pressure/{memory,cpu,io} (kernel 4.20+, CONFIG_PSI).

#include <cstdint>
#include <optional>
#include <string_view>

#include "base/result.hpp"
#include "host/host_root.hpp"

namespace sparkops::host {

struct PsiLine {
  double avg10 = 0;            // percent of wall time stalled, averaged over 10 s
  double avg60 = 0;            // ... 60 s
  double avg300 = 0;           // ... 300 s
  std::uint64_t total_us = 0;  // cumulative stall time, microseconds
};

struct Psi {
  PsiLine some;                 // at least one task stalled
  std::optional<PsiLine> full;  // all non-idle tasks stalled; absent for cpu on kernels < 5.13
};

enum class PsiResource { memory, cpu, io };
std::string_view psi_resource_name(PsiResource resource);  // "memory", "cpu", "io"

// Pure. `file` names the input in errors. A missing "some" line, a missing avg/total key or a
// non-numeric value is malformed (naming the line); unknown keys are ignored.
//   "some avg10=0.00 avg60=0.00 avg300=0.00 total=12345"
Result<Psi> parse_psi(std::string_view text, std::string_view file);
// The same parse for a reader that wants only the totals (the sample tick): the lines, keys and
// totals are checked as parse_psi checks them, the averages' values are neither converted nor
// checked and read 0.
Result<Psi> parse_psi_totals(std::string_view text, std::string_view file);

// Reads /proc/pressure/<resource>; nullopt when the file does not exist (no PSI in the kernel).
// A kernel booted with psi=0 answers EOPNOTSUPP on read: that is reported as absent too.
Result<std::optional<Psi>> read_psi(const HostRoot& root, PsiResource resource);

}  // namespace sparkops::host
