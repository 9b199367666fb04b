#pragma once
// Every host reader in one call, for status, sample and the exporter. Each part is optional (or an
// empty list); a part that could not be read is absent and its error is one line in `notes`.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "host/cgroup.hpp"
#include "host/cpufreq.hpp"
#include "host/host_root.hpp"
#include "host/hwmon.hpp"
#include "host/kernel_log.hpp"
#include "host/meminfo.hpp"
#include "host/pressure.hpp"
#include "host/sensors.hpp"
#include "host/system_info.hpp"
#include "host/thermal_zone.hpp"
#include "host/vmstat.hpp"

namespace sparkops::host {

enum class KernelLogPolicy { skip, include };

struct HostSnapshotOptions {
  // Reading /dev/kmsg costs a walk over the whole ring buffer: off unless a caller needs it.
  KernelLogPolicy kernel_log = KernelLogPolicy::skip;
  std::size_t kernel_log_max_bytes = 1 << 20;
};

struct HostSnapshot {
  std::optional<Meminfo> meminfo;
  std::optional<CgroupMemory> cgroup;
  std::optional<Psi> psi_memory;
  std::optional<Psi> psi_cpu;
  std::optional<Psi> psi_io;
  std::optional<Vmstat> vmstat;
  std::vector<HwmonChip> hwmon;            // empty: no hwmon class or no chips
  std::vector<ThermalZone> thermal_zones;  // empty: none
  std::vector<CpuFreq> cpufreq;            // empty: no cpufreq (VMs, containers)
  SystemInfo system;
  std::optional<KernelLog> kernel_log;  // only with KernelLogPolicy::include

  // Derived from the above.
  std::optional<SensorReading> hottest;
  std::vector<PowerRail> spbm_rails;
  std::optional<SpbmStatus> spbm;

  // One line per part that was present but unreadable or malformed ("<file>: permission denied"),
  // plus hwmon attributes dropped as malformed and kernel-log fallbacks.
  std::vector<std::string> notes;
};

// Never fails: a missing file leaves its part absent without a note; any other error leaves it
// absent with a note.
HostSnapshot read_host_snapshot(const HostRoot& root, const HostSnapshotOptions& options = {});

}  // namespace sparkops::host
