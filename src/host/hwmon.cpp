#include "host/hwmon.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "base/text.hpp"
#include "host/read_optional.hpp"

namespace sparkops::host {

std::uint64_t HwmonPower::reading_microwatts() const {
  return input_microwatts.value_or(average_microwatts.value_or(0));
}

namespace {

template <class Channel>
const Channel* by_label(const std::vector<Channel>& channels, std::string_view label) {
  for (const auto& c : channels) {
    if (c.label && *c.label == label) return &c;
  }
  return nullptr;
}

enum class Kind { temp, power, energy, in, curr };

struct AttrName {
  Kind kind;
  unsigned index;
  std::string_view item;  // "input", "label", "crit", ...
};

// "temp1_input" -> {temp, 1, "input"}; nullopt for anything else ("name", "uevent", "power").
std::optional<AttrName> classify(std::string_view file) {
  static constexpr std::pair<std::string_view, Kind> kPrefixes[] = {
      {"temp", Kind::temp}, {"power", Kind::power}, {"energy", Kind::energy},
      {"in", Kind::in},     {"curr", Kind::curr},
  };
  for (const auto& [prefix, kind] : kPrefixes) {
    if (!file.starts_with(prefix)) continue;
    const std::string_view rest = file.substr(prefix.size());
    const std::size_t underscore = rest.find('_');
    if (underscore == 0 || underscore == std::string_view::npos) return std::nullopt;
    const auto index = entry_index(rest.substr(0, underscore), "");
    if (!index) return std::nullopt;
    return AttrName{kind, *index, rest.substr(underscore + 1)};
  }
  return std::nullopt;
}

bool wanted_item(std::string_view item) {
  return item == "input" || item == "label" || item == "crit" || item == "max" ||
         item == "average" || item == "cap";
}

struct RawChannel {
  std::optional<std::string> label;
  std::map<std::string, std::int64_t, std::less<>> values;  // item -> value
};

std::optional<std::int64_t> item(const RawChannel& c, std::string_view name) {
  const auto it = c.values.find(name);
  if (it == c.values.end()) return std::nullopt;
  return it->second;
}

std::optional<std::uint64_t> unsigned_item(const RawChannel& c, std::string_view name) {
  const auto v = item(c, name);
  if (!v) return std::nullopt;
  return static_cast<std::uint64_t>(*v);
}

}  // namespace

const HwmonTemp* HwmonChip::temp_by_label(std::string_view label) const {
  return by_label(temps, label);
}
const HwmonPower* HwmonChip::power_by_label(std::string_view label) const {
  return by_label(powers, label);
}
const HwmonEnergy* HwmonChip::energy_by_label(std::string_view label) const {
  return by_label(energies, label);
}

Result<std::int64_t> parse_hwmon_value(std::string_view text, std::string_view file) {
  // "45000\n"
  if (const auto v = parse_i64(text)) return *v;
  return fail(Errc::malformed, fmt::format("{} line 1: expected an integer, got {}", file,
                                           quote_for_message(trim(text))));
}

HwmonChip parse_hwmon_chip(std::string_view sysfs_dir,
                           const std::map<std::string, std::string>& files) {
  HwmonChip chip;
  const std::size_t slash = sysfs_dir.rfind('/');
  chip.dir = std::string(slash == std::string_view::npos ? sysfs_dir : sysfs_dir.substr(slash + 1));
  std::map<std::pair<Kind, unsigned>, RawChannel> raw;
  for (const auto& [file, content] : files) {
    const std::string path = fmt::format("{}/{}", sysfs_dir, file);
    if (file == "name") {
      chip.name = std::string(trim(content));
      continue;
    }
    if (std::find(std::begin(kHwmonStatusAttributes), std::end(kHwmonStatusAttributes), file) !=
        std::end(kHwmonStatusAttributes)) {
      const auto v = parse_hwmon_value(content, path);
      if (!v || *v < 0) {
        chip.notes.push_back(v ? fmt::format("{} line 1: negative status value", path)
                               : v.error().detail);
        continue;
      }
      chip.status[file] = static_cast<std::uint64_t>(*v);
      continue;
    }
    const auto attr = classify(file);
    if (!attr || !wanted_item(attr->item)) continue;
    RawChannel& channel = raw[{attr->kind, attr->index}];
    if (attr->item == "label") {
      channel.label = std::string(trim(content));
      continue;
    }
    const auto v = parse_hwmon_value(content, path);
    if (!v) {
      chip.notes.push_back(v.error().detail);
      continue;
    }
    const bool must_be_unsigned = attr->kind == Kind::power || attr->kind == Kind::energy;
    if (must_be_unsigned && *v < 0) {
      chip.notes.push_back(fmt::format("{} line 1: negative reading {}", path, *v));
      continue;
    }
    channel.values[std::string(attr->item)] = *v;
  }
  // std::map orders by (kind, index), so each list comes out sorted by index.
  for (const auto& [key, c] : raw) {
    const auto [kind, index] = key;
    const auto input = item(c, "input");
    switch (kind) {
      case Kind::temp:
        if (input) chip.temps.push_back({index, c.label, *input, item(c, "max"), item(c, "crit")});
        break;
      case Kind::power: {
        HwmonPower p{index,
                     c.label,
                     unsigned_item(c, "input"),
                     unsigned_item(c, "average"),
                     unsigned_item(c, "cap"),
                     unsigned_item(c, "max")};
        if (p.input_microwatts || p.average_microwatts) chip.powers.push_back(std::move(p));
        break;
      }
      case Kind::energy:
        if (input) chip.energies.push_back({index, c.label, static_cast<std::uint64_t>(*input)});
        break;
      case Kind::in:
        if (input) chip.voltages.push_back({index, c.label, *input});
        break;
      case Kind::curr:
        if (input) chip.currents.push_back({index, c.label, *input});
        break;
    }
  }
  return chip;
}

namespace {

bool worth_reading(std::string_view file) {
  if (file == "name") return true;
  if (std::find(std::begin(kHwmonStatusAttributes), std::end(kHwmonStatusAttributes), file) !=
      std::end(kHwmonStatusAttributes)) {
    return true;
  }
  const auto attr = classify(file);
  return attr && wanted_item(attr->item);
}

}  // namespace

Result<std::vector<HwmonChip>> read_hwmon_chips(const HostRoot& root) {
  std::vector<HwmonChip> chips;
  auto entries = root.list("/sys/class/hwmon");
  if (!entries) {
    if (entries.error().code == Errc::not_found) return chips;
    return tl::unexpected(entries.error());
  }
  std::vector<std::pair<unsigned, std::string>> dirs;
  for (const auto& entry : *entries) {
    if (const auto index = entry_index(entry, "hwmon")) dirs.emplace_back(*index, entry);
  }
  std::sort(dirs.begin(), dirs.end());
  for (const auto& [index, entry] : dirs) {
    std::string dir = "/sys/class/hwmon/" + entry;
    if (!root.exists(dir + "/name") && root.exists(dir + "/device/name")) dir += "/device";
    auto files = root.list(dir);
    if (!files) continue;  // vanished (hot-unplug) or unreadable: that chip is absent
    std::map<std::string, std::string> contents;
    for (const auto& file : *files) {
      if (!worth_reading(file)) continue;
      // EIO/ENODATA/EACCES on one attribute: that attribute (and maybe its channel) is absent.
      auto text = root.read(dir + "/" + file, 4096);
      if (text) contents.emplace(file, std::move(*text));
    }
    HwmonChip chip = parse_hwmon_chip("/sys/class/hwmon/" + entry, contents);
    chip.dir = entry;
    if (!chip.name.empty()) chips.push_back(std::move(chip));
  }
  return chips;
}

const HwmonChip* find_chip(const std::vector<HwmonChip>& chips, std::string_view name) {
  for (const auto& chip : chips) {
    if (chip.name == name) return &chip;
  }
  return nullptr;
}

std::vector<const HwmonChip*> find_chips(const std::vector<HwmonChip>& chips,
                                         std::string_view name) {
  std::vector<const HwmonChip*> out;
  for (const auto& chip : chips) {
    if (chip.name == name) out.push_back(&chip);
  }
  return out;
}

}  // namespace sparkops::host
