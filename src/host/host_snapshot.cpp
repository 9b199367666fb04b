#include "host/host_snapshot.hpp"

namespace sparkops::host {

namespace {

// Result<T> -> optional<T>; errors other than not_found become a note.
template <class T>
std::optional<T> keep(Result<T> result, std::vector<std::string>& notes) {
  if (result) return std::move(*result);
  if (result.error().code != Errc::not_found) notes.push_back(result.error().detail);
  return std::nullopt;
}

// Result<optional<T>> -> optional<T>.
template <class T>
std::optional<T> keep(Result<std::optional<T>> result, std::vector<std::string>& notes) {
  if (result) return std::move(*result);
  if (result.error().code != Errc::not_found) notes.push_back(result.error().detail);
  return std::nullopt;
}

}  // namespace

HostSnapshot read_host_snapshot(const HostRoot& root, const HostSnapshotOptions& options) {
  HostSnapshot s;
  auto& notes = s.notes;
  s.meminfo = keep(read_meminfo(root), notes);
  s.cgroup = keep(read_cgroup_memory(root), notes);
  s.psi_memory = keep(read_psi(root, PsiResource::memory), notes);
  s.psi_cpu = keep(read_psi(root, PsiResource::cpu), notes);
  s.psi_io = keep(read_psi(root, PsiResource::io), notes);
  s.vmstat = keep(read_vmstat(root), notes);
  s.hwmon = keep(read_hwmon_chips(root), notes).value_or(std::vector<HwmonChip>{});
  for (const auto& chip : s.hwmon) notes.insert(notes.end(), chip.notes.begin(), chip.notes.end());
  s.thermal_zones = keep(read_thermal_zones(root), notes).value_or(std::vector<ThermalZone>{});
  s.cpufreq = keep(read_cpufreq(root), notes).value_or(std::vector<CpuFreq>{});
  s.system = keep(read_system_info(root), notes).value_or(SystemInfo{});
  if (options.kernel_log == KernelLogPolicy::include) {
    s.kernel_log = keep(read_kernel_log(root, options.kernel_log_max_bytes), notes);
    if (s.kernel_log)
      notes.insert(notes.end(), s.kernel_log->notes.begin(), s.kernel_log->notes.end());
  }
  s.hottest = hottest_sensor(s.hwmon, s.thermal_zones);
  s.spbm_rails = spbm_rails(s.hwmon);
  s.spbm = spbm_status(s.hwmon);
  return s;
}

}  // namespace sparkops::host
