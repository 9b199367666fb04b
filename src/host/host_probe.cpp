#include "host/host_probe.hpp"

#include <algorithm>
#include <utility>

#include "base/text.hpp"
#include "host/hwmon.hpp"
#include "host/meminfo.hpp"
#include "host/pressure.hpp"
#include "host/sensors.hpp"
#include "host/thermal_zone.hpp"
#include "host/vmstat.hpp"

namespace sparkops::host {

namespace {

// hottest_sensor()'s plausibility range (host/sensors.hpp: -40..150 C).
bool plausible(std::int64_t millicelsius) {
  return millicelsius >= -40000 && millicelsius <= 150000;
}

std::string hwmon_file(const HostRoot& root, const std::string& dir, const std::string& file) {
  std::string path = "/sys/class/hwmon/" + dir + "/" + file;
  if (!root.exists(path)) path = "/sys/class/hwmon/" + dir + "/device/" + file;
  return path;
}

}  // namespace

HostProbe::HostProbe(HostRoot root, std::uint64_t rediscover_every)
    : root_(std::move(root)), rediscover_every_(rediscover_every) {}

void HostProbe::watch(const HeldFile& file) {
  if (watch_ && !watch_->add(file.path())) check_links_ = true;
}

std::optional<std::string_view> HostProbe::fresh(HeldFile& file) const {
  auto text = file.reread();
  if (!text || (check_links_ && file.unlinked())) return std::nullopt;
  return *text;
}

// The content of a held /proc file, reopening it when it is missing or its read fails (a captured
// root whose file was replaced by rename, a file that appears later): one failed open a tick at
// most.
std::optional<std::string_view> HostProbe::reread_or_reopen(std::optional<HeldFile>& file,
                                                            std::string_view path) {
  if (file) {
    if (auto text = fresh(*file)) return text;
  }
  file.reset();
  if (auto f = root_.hold(path)) file = std::move(*f);
  if (!file) return std::nullopt;
  watch(*file);
  return fresh(*file);
}

void HostProbe::discover() {
  temps_.clear();
  rails_.clear();
  // A fresh watch: the old one's events are about files this discovery lets go.
  watch_.reset();
  check_links_ = false;
  if (!root_.is_live()) {
    watch_.emplace();
    check_links_ = !watch_->available();
  }
  std::vector<HwmonChip> chips;
  if (auto c = read_hwmon_chips(root_)) chips = std::move(*c);
  std::vector<ThermalZone> zones;
  if (auto z = read_thermal_zones(root_)) zones = std::move(*z);
  // Which channels hottest_sensor() considers, and under what name: ask it one channel at a time,
  // so its rules (skipped channels, naming) stay in one place.
  for (const HwmonChip& chip : chips) {
    for (const HwmonTemp& t : chip.temps) {
      HwmonChip one;
      one.dir = chip.dir;
      one.name = chip.name;
      HwmonTemp probe = t;
      probe.input_millicelsius =
          20000;  // any plausible value: we ask about the channel, not the reading
      one.temps.push_back(probe);
      if (auto s = hottest_sensor({one}, {})) {
        if (auto f = root_.hold(
                hwmon_file(root_, chip.dir, "temp" + std::to_string(t.index) + "_input"))) {
          watch(*f);
          temps_.push_back({std::move(*f), s->name});
        }
      }
    }
  }
  for (const ThermalZone& z : zones) {
    ThermalZone one = z;
    one.temp_millicelsius = 20000;
    if (auto s = hottest_sensor({}, {one})) {
      if (auto f = root_.hold("/sys/class/thermal/" + z.zone + "/temp")) {
        watch(*f);
        temps_.push_back({std::move(*f), s->name});
      }
    }
  }
  if (const HwmonChip* spbm = find_chip(chips, "spbm")) {
    const std::pair<const char*, Rail> wanted[] = {{"sys_total", Rail::sys_total},
                                                   {"soc_pkg", Rail::soc_pkg},
                                                   {"cpu_gpu", Rail::cpu_gpu},
                                                   {"gpu", Rail::gpu},
                                                   {"dc_input", Rail::dc_input}};
    const auto rails = spbm_rails(chips);
    for (const auto& [label, rail] : wanted) {
      bool listed = false;
      for (const PowerRail& r : rails) listed = listed || r.name == label;
      const HwmonPower* p = spbm->power_by_label(label);
      if (!listed || p == nullptr) continue;
      const std::string file =
          "power" + std::to_string(p->index) + (p->input_microwatts ? "_input" : "_average");
      if (auto f = root_.hold(hwmon_file(root_, spbm->dir, file))) {
        watch(*f);
        rails_.push_back({std::move(*f), rail});
      }
    }
  }
  // The /proc files are (re)opened by reread_or_reopen() on their first read after a discovery.
  meminfo_.reset();
  psi_memory_.reset();
  vmstat_.reset();
  discovered_ = true;
  reads_since_discovery_ = 0;
  const std::size_t count = temps_.size() + rails_.size();
  if (count < best_count_) {
    next_discovery_after_ = next_discovery_after_ == 0 || next_discovery_after_ >= rediscover_every_
                                ? 1
                                : std::min(next_discovery_after_ * 2, rediscover_every_);
  } else {
    best_count_ = count;
    next_discovery_after_ = rediscover_every_;
  }
}

HostReading HostProbe::read() {
  if (discovered_ && watch_ && watch_->changed()) discovered_ = false;  // a held file went away
  if (!discovered_ ||
      (next_discovery_after_ != 0 && reads_since_discovery_ >= next_discovery_after_))
    discover();
  ++reads_since_discovery_;
  HostReading h;
  if (const auto text = reread_or_reopen(meminfo_, "/proc/meminfo")) {
    if (auto mem = parse_meminfo_sample(*text)) {
      h.mem_total_bytes = mem->mem_total_bytes;
      h.mem_free_bytes = mem->mem_free_bytes;
      h.mem_available_bytes = mem->mem_available_bytes;
      h.cached_bytes = mem->cached_bytes;
    }
  }
  // A kernel booted with psi=0 keeps the file but fails the read: absent, as read_psi() says.
  if (const auto text = reread_or_reopen(psi_memory_, "/proc/pressure/memory")) {
    if (auto psi = parse_psi_totals(*text, "/proc/pressure/memory")) {
      h.psi_mem_some_total_us = psi->some.total_us;
      if (psi->full) h.psi_mem_full_total_us = psi->full->total_us;
    }
  }
  if (const auto text = reread_or_reopen(vmstat_, "/proc/vmstat")) {
    h.major_faults_total = vmstat_counter(*text, "pgmajfault");
  }

  bool lost_one = false;
  for (TempFile& t : temps_) {
    const auto text = fresh(t.file);
    std::optional<std::int64_t> value;
    // parse_hwmon_value's number without its error text: a failure only drops the channel.
    if (text) value = parse_i64(*text);
    if (!value) {
      lost_one = true;
      continue;
    }
    if (!plausible(*value)) continue;
    if (!h.hottest_millicelsius || *value > *h.hottest_millicelsius) {
      h.hottest_millicelsius = *value;
      h.hottest_sensor = t.name;
    }
  }
  for (RailFile& r : rails_) {
    const auto text = fresh(r.file);
    std::optional<std::int64_t> value;
    if (text) {
      if (auto v = parse_i64(*text); v && *v >= 0) value = *v;
    }
    if (!value) {
      lost_one = true;
      continue;
    }
    const auto uw = static_cast<std::uint64_t>(*value);
    switch (r.rail) {
      case Rail::sys_total:
        h.spbm_sys_total_microwatts = uw;
        break;
      case Rail::soc_pkg:
        h.spbm_soc_pkg_microwatts = uw;
        break;
      case Rail::cpu_gpu:
        h.spbm_cpu_gpu_microwatts = uw;
        break;
      case Rail::gpu:
        h.spbm_gpu_microwatts = uw;
        break;
      case Rail::dc_input:
        h.spbm_dc_input_microwatts = uw;
        break;
    }
  }
  if (lost_one) discovered_ = false;  // look again next tick: a sensor vanished or moved
  return h;
}

}  // namespace sparkops::host
