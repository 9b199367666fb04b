#include "host/pressure.hpp"

#include <fmt/format.h>

#include "base/text.hpp"
#include "host/proc_text.hpp"
#include "host/read_optional.hpp"

namespace sparkops::host {

std::string_view psi_resource_name(PsiResource resource) {
  switch (resource) {
    case PsiResource::memory:
      return "memory";
    case PsiResource::cpu:
      return "cpu";
    case PsiResource::io:
      return "io";
  }
  return "memory";
}

namespace {

// parse_psi_totals' lines: the averages' keys must be there, their values are not converted.
enum class Averages { parse, skip };

Result<PsiLine> parse_psi_line(std::string_view rest, std::string_view file, std::size_t line_no,
                               std::string_view line, Averages averages) {
  PsiLine out;
  bool have10 = false, have60 = false, have300 = false, have_total = false;
  const auto bad = [&](std::string_view why) {
    return fail(Errc::malformed,
                fmt::format("{} line {}: {}: {}", file, line_no, why, quote_for_message(line)));
  };
  std::string_view field;
  for (std::string_view tokens = rest; proc_text::next_token(tokens, field);) {
    const std::size_t eq = field.find('=');
    if (eq == std::string_view::npos) return bad("expected key=value");
    const std::string_view key = field.substr(0, eq);
    const std::string_view value = field.substr(eq + 1);
    if (key == "total") {
      const auto n = parse_u64(value);
      if (!n) return bad("total is not a number");
      out.total_us = *n;
      have_total = true;
      continue;
    }
    double* target = nullptr;
    bool* seen = nullptr;
    if (key == "avg10") target = &out.avg10, seen = &have10;
    if (key == "avg60") target = &out.avg60, seen = &have60;
    if (key == "avg300") target = &out.avg300, seen = &have300;
    if (target == nullptr) continue;
    if (averages == Averages::skip) {
      *seen = true;
      continue;
    }
    const auto d = parse_double(value);
    if (!d) return bad("average is not a number");
    *target = *d;
    *seen = true;
  }
  if (!have10 || !have60 || !have300 || !have_total) return bad("missing avg10/avg60/avg300/total");
  return out;
}

Result<Psi> parse_lines(std::string_view text, std::string_view file, Averages averages) {
  Psi psi;
  bool have_some = false;
  std::size_t line_no = 0;
  std::string_view raw;
  for (std::string_view lines = text; proc_text::next_line(lines, raw);) {
    ++line_no;
    const std::string_view line = trim(raw);
    if (line.empty()) continue;
    const std::size_t space = line.find(' ');
    const std::string_view kind = line.substr(0, space);
    if (kind != "some" && kind != "full") continue;
    auto parsed =
        parse_psi_line(space == std::string_view::npos ? std::string_view() : line.substr(space),
                       file, line_no, line, averages);
    if (!parsed) return tl::unexpected(parsed.error());
    if (kind == "some") {
      psi.some = *parsed;
      have_some = true;
    } else {
      psi.full = *parsed;
    }
  }
  if (!have_some) return fail(Errc::malformed, fmt::format("{}: no \"some\" line", file));
  return psi;
}

}  // namespace

Result<Psi> parse_psi(std::string_view text, std::string_view file) {
  return parse_lines(text, file, Averages::parse);
}

Result<Psi> parse_psi_totals(std::string_view text, std::string_view file) {
  return parse_lines(text, file, Averages::skip);
}

Result<std::optional<Psi>> read_psi(const HostRoot& root, PsiResource resource) {
  const std::string file = fmt::format("/proc/pressure/{}", psi_resource_name(resource));
  auto text = read_optional(root, file);
  if (!text) {
    // psi=0 on the kernel command line: the files exist but reads fail with EOPNOTSUPP.
    if (text.error().code == Errc::io && contains(text.error().detail, "not supported")) {
      return std::optional<Psi>();
    }
    return tl::unexpected(text.error());
  }
  if (!*text) return std::optional<Psi>();
  auto psi = parse_psi(**text, file);
  if (!psi) return tl::unexpected(psi.error());
  return std::optional<Psi>(*psi);
}

}  // namespace sparkops::host
