#include "cli/colour.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>

#include <unistd.h>

#include "base/text.hpp"

namespace sparkops::cli {

void add_colour_flag(CLI::App* cmd, AppContext& ctx) {
  cmd->add_flag(
      "--no-color", ctx.no_color,
      "No colour even on a terminal (colour is also off for pipes and with NO_COLOR set)");
}

bool colour_enabled(const AppContext& ctx, std::FILE* stream) {
  if (ctx.no_color || stream == nullptr) return false;
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color != nullptr && no_color[0] != '\0') return false;
  const char* term = std::getenv("TERM");
  if (term == nullptr || term[0] == '\0' || std::strcmp(term, "dumb") == 0) return false;
  return ::isatty(::fileno(stream)) == 1;
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

struct Keyword {
  std::string_view word;
  Tone tone;
};

// First words the renderers put on verdict and warning lines (status, plan, procs, oom, analyze).
constexpr std::array<Keyword, 16> kKeywords = {{
    {"FITS", Tone::ok},
    {"fits", Tone::ok},
    {"coexists", Tone::ok},
    {"TIGHT", Tone::warn},
    {"tight", Tone::warn},
    {"warning:", Tone::warn},
    {"WARNING", Tone::warn},
    {"note:", Tone::warn},
    {"STOP", Tone::bad},
    {"stop_first", Tone::bad},
    {"DOES", Tone::bad},
    {"does_not_fit", Tone::bad},
    {"one", Tone::bad},
    {"OOM", Tone::bad},
    {"error:", Tone::bad},
    {"THROTTLED", Tone::bad},
}};

std::string paint_line(std::string_view line) {
  const std::string_view body = trim(line);
  if (body.empty()) return std::string(line);
  const std::size_t end = body.find(' ');
  const std::string_view first = body.substr(0, end);
  for (const auto& k : kKeywords) {
    // "one" only as "one heavy job at a time" (the coexistence rule broken).
    if (k.word == "one" && !starts_with(body, "one heavy job at a time: stop")) continue;
    if (first == k.word) return paint(line, k.tone, true);
  }
  const bool heading = line.front() != ' ' && first.size() >= 2 &&
                       std::all_of(first.begin(), first.end(), [](char c) {
                         return (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
                       });
  return heading ? paint(line, Tone::heading, true) : std::string(line);
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

}  // namespace sparkops::cli
