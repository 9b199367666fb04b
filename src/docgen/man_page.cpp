#include "docgen/man_page.hpp"

#include <string_view>

#include <fmt/format.h>

namespace sparkops::docgen {
namespace {

// Text for roff: backslashes escaped, a line starting with '.' or '\'' made literal, hyphens in
// option names as \- so they copy and search as ASCII.
std::string roff(std::string_view text) {
  std::string out;
  bool line_start = true;
  for (const char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
    line_start = c == '\n';
  }
  return out;
}

std::string option_item(const OptionSpec& o) {
  std::string names;
  for (const auto& n : o.names) {
    if (!names.empty()) names += ", ";
    names += "\\fB" + roff(n) + "\\fR";
  }
  if (!o.label.empty()) names += " \\fI" + roff(o.label) + "\\fR";
  return fmt::format(".TP\n{}\n{}\n", names, roff(o.description));
}

// "Example:\n  sparkops ..." as an indented literal block.
std::string example_block(std::string_view footer) {
  if (footer.empty()) return {};
  std::string body(footer);
  if (body.rfind("Example:\n", 0) == 0) body.erase(0, 9);
  std::string out = ".PP\nExample:\n.RS\n.nf\n";
  std::string_view rest = body;
  while (!rest.empty()) {
    const auto nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    out += roff(line) + "\n";
    if (nl == std::string_view::npos) break;
    rest.remove_prefix(nl + 1);
  }
  return out + ".fi\n.RE\n";
}

// NAME's one line: the description's first line without the leading "sparkops: ".
std::string name_line(std::string_view description) {
  description = description.substr(0, description.find('\n'));
  if (description.rfind("sparkops: ", 0) == 0) description.remove_prefix(10);
  while (!description.empty() && description.back() == '.') description.remove_suffix(1);
  return std::string(description);
}

}  // namespace

std::string man_page(const ProgramSpec& spec, const std::string& version) {
  std::string out = fmt::format(
      ".TH SPARKOPS 1 \"\" \"sparkops {}\" \"User Commands\"\n.SH NAME\nsparkops \\- {}\n",
      roff(version), roff(name_line(spec.description)));
  out +=
      ".SH SYNOPSIS\n.B sparkops\n[\\fIGLOBAL OPTIONS\\fR] \\fICOMMAND\\fR [\\fIOPTIONS\\fR] "
      "[\\fIGLOBAL OPTIONS\\fR]\n";
  out += ".SH DESCRIPTION\n" + roff(spec.description) + "\n";
  out +=
      ".PP\nGlobal options are accepted before or after the command. \\fBsparkops help "
      "\\fICOMMAND\\fR prints one command's help.\n";
  out += ".SH GLOBAL OPTIONS\n";
  for (const auto& o : spec.global_options) out += option_item(o);
  out += ".SH COMMANDS\n";
  for (const auto& c : spec.commands) {
    std::string synopsis = "sparkops " + c.name + " [OPTIONS]";
    if (!c.positional.empty()) synopsis += " " + c.positional;
    out += fmt::format(".SS \"{}\"\n{}\n", roff(synopsis), roff(c.description));
    if (!c.positional.empty()) {
      out +=
          option_item(OptionSpec{{c.positional}, {}, c.positional_description, {}, false, false});
    }
    for (const auto& o : c.options) out += option_item(o);
    out += example_block(c.footer);
  }
  out += R"(.SH EXIT STATUS
.TP
.B 0
Success: the command ran and the answer is yes (it fits, nothing to stop, no OOM found).
.TP
.B 1
The command ran and the answer is no (will not fit, something must stop first, a job failed),
or the machine could not be read.
.TP
.B 2
Bad input: a flag, file or value was refused; one line on stderr names it and the problem.
.TP
.B 3
Tight: it fits, with less margin than the configured one (plan, procs).
.TP
.B 70
Internal error (a bug; please report it).
.PP
\fBsparkops watch\fR exits with the job's own status.
.SH ENVIRONMENT
.TP
.B SPARKOPS_ROOT
Same as \fB\-\-root\fR.
.TP
.B SPARKOPS_CONFIG
An extra configuration file, read after the system and user files (\fB\-\-config\fR wins).
.TP
.B SPARKOPS_GPU_BACKEND
auto, nvml, nvidia\-smi or none (\fB\-\-gpu\fR wins).
.TP
.B SPARKOPS_NVML_LIB
Path to libnvidia\-ml (default libnvidia\-ml.so.1).
.TP
.B NO_COLOR
When set and not empty, no colour (as \fB\-\-no\-color\fR).
.SH FILES
.TP
.I /etc/sparkops/config.toml
System configuration.
.TP
.I ~/.config/sparkops/config.toml
User configuration ($XDG_CONFIG_HOME/sparkops/config.toml when XDG_CONFIG_HOME is set).
.SH SEE ALSO
\fBsparkops config\fR lists every configuration key, its value and where it came from;
\fBsparkops completion\fR \fIbash\fR|\fIzsh\fR|\fIfish\fR prints a shell completion script.
)";
  return out;
}

}  // namespace sparkops::docgen
