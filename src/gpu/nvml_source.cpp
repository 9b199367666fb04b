#include "gpu/nvml_source.hpp"

#include <cstring>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "gpu/nvml_library.hpp"

namespace sparkops::gpu {

namespace {

// Reads one device. A GPU_IS_LOST answer from any call sets `lost_code`; every other error makes
// only that figure absent.
class DeviceReader {
 public:
  DeviceReader(const nvml::Symbols& fn, nvmlDevice_t handle) : fn_(fn), handle_(handle) {}

  std::optional<nvmlReturn_t> lost_code() const { return lost_; }

  GpuSnapshot read(unsigned index) {
    GpuSnapshot s;
    s.index = index;
    // Temperature first: the fake library counts these calls as snapshot ticks.
    if (unsigned c = 0; fn_.temperature && ok(fn_.temperature(handle_, NVML_TEMPERATURE_GPU, &c))) {
      s.temp_millicelsius = static_cast<std::int64_t>(c) * 1000;
    }
    if (fn_.margin_temperature) {
      nvmlMarginTemperature_v1_t m{};
      m.version = nvml::kNvmlMarginTemperatureV1Version;
      if (ok(fn_.margin_temperature(handle_, &m))) {
        s.margin_temp_millicelsius = static_cast<std::int64_t>(m.marginTemperature) * 1000;
      }
    }
    if (unsigned mw = 0; fn_.power_usage && ok(fn_.power_usage(handle_, &mw))) {
      s.power_microwatts = static_cast<std::uint64_t>(mw) * 1000;
    }
    if (unsigned long long mj = 0; fn_.total_energy && ok(fn_.total_energy(handle_, &mj))) {
      s.energy_microjoules = static_cast<std::uint64_t>(mj) * 1000;
    }
    if (unsigned mw = 0; fn_.enforced_power_limit && ok(fn_.enforced_power_limit(handle_, &mw))) {
      s.power_limit_microwatts = static_cast<std::uint64_t>(mw) * 1000;
    }
    s.sm_clock_mhz = clock(fn_.clock_info, NVML_CLOCK_SM);
    s.sm_clock_max_mhz = clock(fn_.max_clock_info, NVML_CLOCK_SM);
    s.mem_clock_mhz = clock(fn_.clock_info, NVML_CLOCK_MEM);
    s.mem_clock_max_mhz = clock(fn_.max_clock_info, NVML_CLOCK_MEM);
    if (nvmlUtilization_t u{}; fn_.utilization && ok(fn_.utilization(handle_, &u))) {
      s.util_gpu_percent = u.gpu;
      s.util_mem_percent = u.memory;
    }
    if (int p = NVML_PSTATE_UNKNOWN;
        fn_.performance_state && ok(fn_.performance_state(handle_, &p)) && p >= 0 && p <= 15) {
      s.pstate = static_cast<std::uint32_t>(p);
    }
    if (unsigned long long r = 0;
        fn_.clocks_event_reasons && ok(fn_.clocks_event_reasons(handle_, &r))) {
      s.clocks_event_reasons = r;
    }
    read_counters(s.counters);
    s.memory = memory();
    s.processes = processes();
    return s;
  }

 private:
  bool ok(nvmlReturn_t rc) {
    if (rc == NVML_ERROR_GPU_IS_LOST && !lost_) lost_ = rc;
    return rc == NVML_SUCCESS;
  }

  std::optional<std::uint32_t> clock(nvmlDeviceGetClockInfo_fn f, int type) {
    unsigned mhz = 0;
    if (f && ok(f(handle_, type, &mhz))) return mhz;
    return std::nullopt;
  }

  static std::optional<std::chrono::nanoseconds> counter_value(const nvmlFieldValue_t& v) {
    if (v.nvmlReturn != NVML_SUCCESS) return std::nullopt;
    switch (v.valueType) {
      case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG:
        return std::chrono::nanoseconds(static_cast<std::int64_t>(v.value.ullVal));
      case NVML_VALUE_TYPE_SIGNED_LONG_LONG:
        if (v.value.sllVal < 0) return std::nullopt;
        return std::chrono::nanoseconds(v.value.sllVal);
      case NVML_VALUE_TYPE_UNSIGNED_LONG:
        return std::chrono::nanoseconds(static_cast<std::int64_t>(v.value.ulVal));
      case NVML_VALUE_TYPE_UNSIGNED_INT:
        return std::chrono::nanoseconds(static_cast<std::int64_t>(v.value.uiVal));
      default:
        return std::nullopt;  // a double or short is not a counter: ids disagree with the driver
    }
  }

  void read_counters(ThrottleCounters& c) {
    if (!fn_.field_values) return;
    // Both numberings of the slowdown counters in one call (nvml_api.hpp); the last entry is the
    // older SW thermal policy id, used when neither set answers it.
    constexpr unsigned kIds[9] = {NVML_FI_DEV_PERF_POLICY_POWER,
                                  NVML_FI_DEV_PERF_POLICY_SYNC_BOOST,
                                  NVML_FI_R580_SW_THERM_SLOWDOWN,
                                  NVML_FI_R580_HW_THERM_SLOWDOWN,
                                  NVML_FI_R580_HW_POWER_BRAKE_SLOWDOWN,
                                  NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN,
                                  NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_THERM_SLOWDOWN,
                                  NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN,
                                  NVML_FI_DEV_PERF_POLICY_THERMAL};
    nvmlFieldValue_t v[9]{};
    for (int i = 0; i < 9; ++i) v[i].fieldId = kIds[i];
    if (!ok(fn_.field_values(handle_, 9, v))) return;
    for (const auto& f : v) ok(f.nvmlReturn);
    c.sw_power_cap = counter_value(v[0]);
    c.sync_boost = counter_value(v[1]);
    const int first =
        nvml::choose_slowdown_ids(v[2].nvmlReturn) == nvml::SlowdownIdSet::early_r580_251 ? 2 : 5;
    c.sw_thermal = counter_value(v[first]);
    if (!c.sw_thermal) c.sw_thermal = counter_value(v[8]);
    c.hw_thermal = counter_value(v[first + 1]);
    c.hw_power_brake = counter_value(v[first + 2]);
  }

  std::optional<GpuMemory> memory() {
    if (fn_.memory_info_v2) {
      nvmlMemory_v2_t m{};
      m.version = nvml::kNvmlMemoryV2Version;
      const nvmlReturn_t rc = fn_.memory_info_v2(handle_, &m);
      if (ok(rc)) return GpuMemory{m.total, m.free, m.used};
      // NOT_SUPPORTED from v2 (GB10) is also v1's answer; other codes may mean "v2 unknown".
      if (rc == NVML_ERROR_NOT_SUPPORTED || lost_) return std::nullopt;
    }
    if (fn_.memory_info) {
      nvmlMemory_t m{};
      if (ok(fn_.memory_info(handle_, &m))) return GpuMemory{m.total, m.free, m.used};
    }
    return std::nullopt;
  }

  std::optional<std::vector<GpuProcess>> processes() {
    if (!fn_.compute_processes) return std::nullopt;
    std::vector<nvmlProcessInfo_t> buf(32);
    for (int attempt = 0; attempt < 4; ++attempt) {
      auto count = static_cast<unsigned>(buf.size());
      const nvmlReturn_t rc = fn_.compute_processes(handle_, &count, buf.data());
      if (rc == NVML_ERROR_INSUFFICIENT_SIZE) {
        buf.resize(static_cast<std::size_t>(count) + 8);  // processes may start in between
        continue;
      }
      if (!ok(rc)) return std::nullopt;
      std::vector<GpuProcess> out;
      out.reserve(count);
      for (unsigned i = 0; i < count && i < buf.size(); ++i) {
        GpuProcess p;
        p.pid = buf[i].pid;
        if (buf[i].usedGpuMemory != NVML_VALUE_NOT_AVAILABLE_ULL)
          p.used_bytes = buf[i].usedGpuMemory;
        out.push_back(std::move(p));
      }
      return out;
    }
    return std::nullopt;
  }

  const nvml::Symbols& fn_;
  nvmlDevice_t handle_;
  std::optional<nvmlReturn_t> lost_;
};

std::string c_string(const char* buf, std::size_t cap) {
  return std::string(buf, strnlen(buf, cap));
}

class NvmlGpuSource final : public GpuSource {
 public:
  explicit NvmlGpuSource(std::string library_path) : path_(std::move(library_path)) {
    auto lib = nvml::Library::open(path_);
    if (!lib) {
      state_ = lib.error().code == Errc::not_found ? GpuState::no_library : GpuState::init_failed;
      detail_ = lib.error().detail;
      return;
    }
    lib_.emplace(std::move(*lib));
    if (auto st = start(); !st) {
      state_ = GpuState::init_failed;
      detail_ = st.error().detail;
    }
  }

  ~NvmlGpuSource() override { stop(); }

  NvmlGpuSource(const NvmlGpuSource&) = delete;
  NvmlGpuSource& operator=(const NvmlGpuSource&) = delete;

  std::string_view backend() const override { return "nvml"; }
  GpuState state() const override { return state_; }
  std::string state_detail() const override { return detail_; }
  std::optional<std::string> driver_version() const override { return driver_; }
  const std::vector<GpuDevice>& devices() const override { return devices_; }

  Result<std::vector<GpuSnapshot>> snapshot() override {
    if (state_ == GpuState::lost) {
      stop();
      if (auto st = start(); !st) {
        detail_ = st.error().detail;
        return fail(Errc::gpu_lost, detail_);
      }
    }
    if (!initialized_) return std::vector<GpuSnapshot>{};
    std::vector<GpuSnapshot> out;
    out.reserve(handles_.size());
    for (std::size_t i = 0; i < handles_.size(); ++i) {
      DeviceReader reader(lib_->fn(), handles_[i]);
      out.push_back(reader.read(devices_[i].index));
      if (auto code = reader.lost_code()) {
        state_ = GpuState::lost;
        detail_ = fmt::format("GPU {} lost: {}", devices_[i].index, lib_->error_string(*code));
        return fail(Errc::gpu_lost, detail_);
      }
    }
    return out;
  }

 private:
  // nvmlInit, driver version, device enumeration. On success state is ok or no_devices.
  Status start() {
    const auto& fn = lib_->fn();
    if (const nvmlReturn_t rc = fn.init(); rc != NVML_SUCCESS) {
      return fail(Errc::unsupported, fmt::format("nvmlInit failed: {}", lib_->error_string(rc)));
    }
    initialized_ = true;
    if (fn.driver_version) {
      char buf[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
      if (fn.driver_version(buf, sizeof buf) == NVML_SUCCESS) driver_ = c_string(buf, sizeof buf);
    }
    unsigned count = 0;
    if (const nvmlReturn_t rc = fn.device_count(&count); rc != NVML_SUCCESS) {
      stop();
      return fail(rc == NVML_ERROR_GPU_IS_LOST ? Errc::gpu_lost : Errc::unsupported,
                  fmt::format("nvmlDeviceGetCount failed: {}", lib_->error_string(rc)));
    }
    devices_.clear();
    handles_.clear();
    for (unsigned i = 0; i < count; ++i) {
      nvmlDevice_t h = nullptr;
      const nvmlReturn_t rc = fn.handle_by_index(i, &h);
      if (rc == NVML_ERROR_GPU_IS_LOST) {
        stop();
        return fail(Errc::gpu_lost, fmt::format("GPU {} lost: {}", i, lib_->error_string(rc)));
      }
      if (rc != NVML_SUCCESS) continue;  // e.g. NO_PERMISSION on one device: skip it
      devices_.push_back(describe(i, h));
      handles_.push_back(h);
    }
    state_ = devices_.empty() ? GpuState::no_devices : GpuState::ok;
    detail_ = devices_.empty() ? "NVML found no GPU" : "";
    return {};
  }

  GpuDevice describe(unsigned index, nvmlDevice_t h) const {
    const auto& fn = lib_->fn();
    GpuDevice d;
    d.index = index;
    if (char buf[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {};
        fn.name && fn.name(h, buf, sizeof buf) == NVML_SUCCESS) {
      d.name = c_string(buf, sizeof buf);
    }
    if (char buf[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
        fn.uuid && fn.uuid(h, buf, sizeof buf) == NVML_SUCCESS) {
      d.uuid = c_string(buf, sizeof buf);
    }
    if (nvmlPciInfo_t pci{}; fn.pci_info && fn.pci_info(h, &pci) == NVML_SUCCESS) {
      d.pci_bus_id = c_string(pci.busId, sizeof pci.busId);
    }
    return d;
  }

  void stop() {
    if (initialized_ && lib_) lib_->fn().shutdown();
    initialized_ = false;
  }

  std::string path_;
  std::optional<nvml::Library> lib_;
  bool initialized_ = false;
  GpuState state_ = GpuState::init_failed;
  std::string detail_;
  std::optional<std::string> driver_;
  std::vector<GpuDevice> devices_;
  std::vector<nvmlDevice_t> handles_;
};

}  // namespace

std::unique_ptr<GpuSource> make_nvml_gpu_source(const std::string& library_path) {
  return std::make_unique<NvmlGpuSource>(library_path);
}

}  // namespace sparkops::gpu
