#include "term/colour.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <optional>

#include "base/text.hpp"
#include "term/terminal.hpp"

namespace sparkops::term {

bool colour_enabled(std::FILE* stream, bool turned_off) {
  if (turned_off || stream == nullptr) return false;
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color != nullptr && no_color[0] != '\0') return false;
  return term_is_capable() && is_terminal(stream);
}

std::string paint(std::string_view text, Tone tone, bool enabled) {
  if (!enabled || text.empty()) return std::string(text);
  std::string_view sgr;
  switch (tone) {
    case Tone::ok:
      sgr = "\x1b[32m";
      break;
    case Tone::warn:
      sgr = "\x1b[33m";
      break;
    case Tone::bad:
      sgr = "\x1b[1;31m";
      break;
    case Tone::heading:
      sgr = "\x1b[1m";
      break;
  }
  std::string out(sgr);
  out += text;
  out += "\x1b[0m";
  return out;
}

namespace {

// The tone of one rendered line, from the words the renderers of status, plan, procs, oom and
// analyze put there (their goldens show every form); nullopt leaves it plain.
std::optional<Tone> tone_of(std::string_view line) {
  const std::string_view body = trim(line);
  if (body.empty()) return std::nullopt;
  // Verdict lines: plan's "Verdict   fits", procs' "Verdict: one heavy job ...".
  if (starts_with(body, "Verdict")) {
    if (contains(body, "does_not_fit") || contains(body, "does not fit") ||
        contains(body, "stop") || contains(body, "one heavy job"))
      return Tone::bad;
    if (contains(body, "tight")) return Tone::warn;
    return Tone::ok;
  }
  if (starts_with(body, "one heavy job at a time: stop") || starts_with(body, "Orphan:") ||
      starts_with(body, "Failure:") || starts_with(body, "error:"))
    return Tone::bad;
  if (starts_with(body, "throttle now:")) {
    return body == "throttle now: none" ? Tone::ok : Tone::bad;
  }
  if (starts_with(body, "! ") || starts_with(body, "note:") || starts_with(body, "Note:") ||
      starts_with(body, "Note ") || starts_with(body, "warning:"))
    return Tone::warn;
  if (starts_with(body, "a new run can take up to") || starts_with(body, "Reclaimed "))
    return Tone::ok;
  // Section headings: an upper-case word of three or more letters at column 0 (POOL, GPU ...).
  if (line.front() != ' ') {
    const std::string_view first = body.substr(0, body.find(' '));
    if (first.size() >= 3 &&
        std::all_of(first.begin(), first.end(), [](char c) { return c >= 'A' && c <= 'Z'; }))
      return Tone::heading;
  }
  return std::nullopt;
}

std::string paint_line(std::string_view line) {
  const auto tone = tone_of(line);
  return tone ? paint(line, *tone, true) : std::string(line);
}

}  // namespace

std::string paint_lines(std::string_view text, bool enabled) {
  if (!enabled) return std::string(text);
  std::string out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t nl = text.find('\n', pos);
    const std::size_t end = nl == std::string_view::npos ? text.size() : nl;
    out += paint_line(text.substr(pos, end - pos));
    if (nl != std::string_view::npos) out += '\n';
    pos = end + 1;
  }
  return out;
}

}  // namespace sparkops::term
