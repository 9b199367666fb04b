#pragma once
// hwmon chips under /sys/class/hwmon/hwmon*/ (Documentation/hwmon/sysfs-interface.rst).
// Chips are identified by their `name` file (acpitz, nvme, mlx5, spbm, coretemp ...), never by the
// hwmonN index, which changes across reboots (docs/domain.md "Thermals and throttling").

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "host/host_root.hpp"

namespace sparkops::host {

// A channel exists only when its reading could be read: a tempN_input answering EIO/ENODATA (common
// on real sysfs) leaves the channel out instead of failing the chip.
struct HwmonTemp {
  unsigned index = 0;                             // N in tempN_*
  std::optional<std::string> label;               // tempN_label
  std::int64_t input_millicelsius = 0;            // tempN_input
  std::optional<std::int64_t> max_millicelsius;   // tempN_max
  std::optional<std::int64_t> crit_millicelsius;  // tempN_crit
};

struct HwmonPower {
  unsigned index = 0;
  std::optional<std::string> label;
  std::optional<std::uint64_t> input_microwatts;    // powerN_input (instantaneous)
  std::optional<std::uint64_t> average_microwatts;  // powerN_average
  std::optional<std::uint64_t> cap_microwatts;      // powerN_cap (an enforced limit)
  std::optional<std::uint64_t> max_microwatts;      // powerN_max
  // input when present, else average (a channel always has one of them).
  std::uint64_t reading_microwatts() const;
};

struct HwmonEnergy {
  unsigned index = 0;
  std::optional<std::string> label;
  std::uint64_t input_microjoules = 0;  // energyN_input, cumulative
};

struct HwmonVoltage {
  unsigned index = 0;  // inN_* starts at 0
  std::optional<std::string> label;
  std::int64_t input_millivolts = 0;
};

struct HwmonCurrent {
  unsigned index = 0;
  std::optional<std::string> label;
  std::int64_t input_milliamps = 0;
};

struct HwmonChip {
  std::string dir;               // "hwmon3" (informational only)
  std::string name;              // content of `name`: "acpitz", "spbm", "nvme", "mlx5", "coretemp"
  std::vector<HwmonTemp> temps;  // each list sorted by index
  std::vector<HwmonPower> powers;
  std::vector<HwmonEnergy> energies;
  std::vector<HwmonVoltage> voltages;
  std::vector<HwmonCurrent> currents;
  // Non-channel numeric attributes sparkops knows: the spbm driver's "prochot" (0 = normal) and
  // "pl_level" (active power-limit level).
  std::map<std::string, std::uint64_t> status;
  // Attributes dropped because their content was malformed ("<file> line 1: ...").
  std::vector<std::string> notes;

  const HwmonTemp* temp_by_label(std::string_view label) const;
  const HwmonPower* power_by_label(std::string_view label) const;
  const HwmonEnergy* energy_by_label(std::string_view label) const;
};

// The names of the non-channel attributes read into HwmonChip::status.
inline constexpr std::string_view kHwmonStatusAttributes[] = {"prochot", "pl_level"};

// Pure: one attribute value ("45000\n") as a signed integer; malformed names `file` and line 1.
Result<std::int64_t> parse_hwmon_value(std::string_view text, std::string_view file);

// Pure: builds a chip from {attribute file name -> content} as read from `sysfs_dir`
// ("/sys/class/hwmon/hwmon3", used in notes). Unknown files are ignored; a malformed value drops
// that attribute with a note; a channel without its reading is left out. Negative power/energy
// readings are malformed.
HwmonChip parse_hwmon_chip(std::string_view sysfs_dir,
                           const std::map<std::string, std::string>& files);

// Walks /sys/class/hwmon/hwmon* (real directories or symlinks); a chip whose attributes live in
// device/ (older drivers) is read from there. Chips without a readable `name` are skipped.
// Sorted by hwmon index. Empty when the class directory does not exist.
Result<std::vector<HwmonChip>> read_hwmon_chips(const HostRoot& root);

// The first chip with this name (there can be several "nvme"/"mlx5"; use find_chips for all).
const HwmonChip* find_chip(const std::vector<HwmonChip>& chips, std::string_view name);
std::vector<const HwmonChip*> find_chips(const std::vector<HwmonChip>& chips,
                                         std::string_view name);

}  // namespace sparkops::host
