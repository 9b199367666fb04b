#pragma once
// Identity of the machine for report headers and metric labels.

#include <optional>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "host/host_root.hpp"

namespace sparkops::host {

struct SystemInfo {
  std::optional<std::string> hostname;        // /proc/sys/kernel/hostname
  std::optional<std::string> kernel_release;  // /proc/sys/kernel/osrelease ("6.11.0-1016-nvidia")
  std::optional<std::string> architecture;  // /proc/sys/kernel/arch, else uname(2) on the live root
  std::optional<std::string> os_pretty_name;  // os-release PRETTY_NAME
  std::optional<std::string> board_model;     // /proc/device-tree/model or DMI product_name
  // Why sparkops thinks this is a GB10 (DGX Spark or an OEM GB10 box), absent when nothing says so:
  // e.g. "DMI product_name \"NVIDIA DGX Spark\"", "ACPI device NVDA8800 (GB10 MTEL)".
  std::optional<std::string> gb10_evidence;
};

// Pure: the PRETTY_NAME value of an os-release file (quotes and backslash escapes removed);
// nullopt when absent. A PRETTY_NAME line with an unterminated quote is malformed.
//   PRETTY_NAME="Ubuntu 24.04.3 LTS"
Result<std::optional<std::string>> parse_os_release_pretty_name(std::string_view text);

// Pure: does a board/product string name a GB10 machine? ("NVIDIA DGX Spark", "ASUS Ascent GX10"
// ...)
bool names_gb10_board(std::string_view model);

// Every field is optional; only malformed os-release content is an Error.
Result<SystemInfo> read_system_info(const HostRoot& root);

}  // namespace sparkops::host
