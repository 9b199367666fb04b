#include "host/system_info.hpp"

#include <sys/utsname.h>

#include <fmt/format.h>

#include "base/text.hpp"
#include "host/read_optional.hpp"

namespace sparkops::host {

namespace {

// One-line sysfs/procfs value: trimmed, trailing NULs (device-tree strings) removed; nullopt when
// unreadable or empty.
std::optional<std::string> read_value(const HostRoot& root, std::string_view path) {
  auto text = root.read(path, 4096);
  if (!text) return std::nullopt;
  std::string_view v = *text;
  while (!v.empty() && v.back() == '\0') v.remove_suffix(1);
  v = trim(v);
  if (v.empty()) return std::nullopt;
  return std::string(v);
}

}  // namespace

Result<std::optional<std::string>> parse_os_release_pretty_name(std::string_view text) {
  std::size_t line_no = 0;
  for (const std::string_view raw : split_lines(text)) {
    ++line_no;
    const std::string_view line = trim(raw);
    if (!line.starts_with("PRETTY_NAME=")) continue;
    std::string_view value = line.substr(12);
    if (value.empty()) return std::optional<std::string>();
    const char quote = value.front();
    if (quote != '"' && quote != '\'') return std::optional<std::string>(std::string(value));
    std::string out;
    bool closed = false;
    for (std::size_t i = 1; i < value.size(); ++i) {
      const char c = value[i];
      if (c == quote) {
        closed = true;
        break;
      }
      if (c == '\\' && quote == '"' && i + 1 < value.size()) {
        out.push_back(value[++i]);
        continue;
      }
      out.push_back(c);
    }
    if (!closed) {
      return fail(Errc::malformed, fmt::format("/etc/os-release line {}: unterminated quote: {}",
                                               line_no, quote_for_message(line)));
    }
    if (out.empty()) return std::optional<std::string>();
    return std::optional<std::string>(std::move(out));
  }
  return std::optional<std::string>();
}

bool names_gb10_board(std::string_view model) {
  static constexpr std::string_view kNames[] = {
      "DGX Spark", "GB10",     "Ascent GX10", "ThinkStation PGX",
      "EdgeXpert", "ZGX Nano", "AI TOP ATOM",
  };
  for (const auto name : kNames) {
    if (icontains(model, name)) return true;
  }
  return false;
}

Result<SystemInfo> read_system_info(const HostRoot& root) {
  SystemInfo info;
  info.hostname = read_value(root, "/proc/sys/kernel/hostname");
  info.kernel_release = read_value(root, "/proc/sys/kernel/osrelease");
  info.architecture = read_value(root, "/proc/sys/kernel/arch");
  if (!info.architecture && root.is_live()) {
    struct utsname u {};
    if (::uname(&u) == 0) info.architecture = std::string(u.machine);
  }
  for (const std::string_view path : {"/etc/os-release", "/usr/lib/os-release"}) {
    auto text = read_optional(root, path);
    if (!text || !*text) continue;
    auto pretty = parse_os_release_pretty_name(**text);
    if (!pretty) return tl::unexpected(pretty.error());
    info.os_pretty_name = *pretty;
    break;
  }
  const std::optional<std::string> dt_model = read_value(root, "/proc/device-tree/model");
  const std::optional<std::string> dmi_product = read_value(root, "/sys/class/dmi/id/product_name");
  info.board_model = dt_model ? dt_model : dmi_product;
  if (dmi_product && names_gb10_board(*dmi_product)) {
    info.gb10_evidence = fmt::format("DMI product_name {}", quote_for_message(*dmi_product));
  } else if (dt_model && names_gb10_board(*dt_model)) {
    info.gb10_evidence = fmt::format("device-tree model {}", quote_for_message(*dt_model));
  } else if (root.exists("/sys/bus/acpi/devices/NVDA8800:00")) {
    info.gb10_evidence = "ACPI device NVDA8800 (GB10 MTEL)";
  }
  return info;
}

}  // namespace sparkops::host
