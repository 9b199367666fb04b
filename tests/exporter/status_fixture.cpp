#include "status_fixture.hpp"

#include <chrono>

namespace sparkops::test {

status::StatusReport full_status_report() {
  using namespace std::chrono;
  status::StatusReport r;
  r.taken_at = SystemTime{seconds{1762680372}};
  r.sparkops_version = "0.1.0";
  r.system.hostname = "spark-01";
  r.system.kernel_release = "6.11.0-1016-nvidia";
  r.system.architecture = "aarch64";
  r.system.os_pretty_name = "Ubuntu 24.04.3 LTS";
  r.system.board_model = "NVIDIA DGX Spark";
  host::PoolView p;
  p.total_bytes = 128526278656ULL;
  p.free_now_bytes = 44023414784ULL;
  p.available_bytes = 121412186112ULL;
  p.reclaimable_bytes = p.available_bytes - p.free_now_bytes;
  p.hugepages_reserved_bytes = 0;
  p.cgroup_headroom_bytes = 107374182400ULL;
  p.effective_available_bytes = 107374182400ULL;
  p.overhead_bytes = 4ULL << 30;
  p.budget_bytes = p.effective_available_bytes - p.overhead_bytes;
  p.flush_suggested = true;
  r.pool = p;
  host::CgroupMemory cg;
  cg.path = "/system.slice/docker-abc.scope";
  cg.max_bytes = 117440512000ULL;
  cg.high_bytes = 112742891520ULL;
  cg.current_bytes = 10065330176ULL;
  cg.limit_path = cg.path;
  r.cgroup = cg;
  host::Psi psi;
  psi.some = host::PsiLine{1.25, 0.5, 0.3, 123456789};
  psi.full = host::PsiLine{0.75, 0.25, 0.1, 23456789};
  r.memory_pressure = psi;
  host::Vmstat vm;
  vm.oom_kill = 1;
  vm.pgmajfault = 48213;
  vm.workingset_refault_anon = 1200;
  vm.workingset_refault_file = 873411;
  vm.pswpin = 0;
  r.vmstat = vm;
  r.hottest_sensor = host::SensorReading{"acpitz/temp1", 71500};
  r.spbm_rails = {{"sys_total", 98250000}, {"gpu", 61000000}};
  r.spbm = host::SpbmStatus{};
  r.spbm->prochot = 0;
  r.gpu.backend = "nvml";
  r.gpu.state = gpu::GpuState::ok;
  r.gpu.driver_version = "580.95.05";
  r.gpu.devices = {gpu::GpuDevice{0, "NVIDIA GB10", "GPU-5f2b3c1e-0000-1111-2222-333344445555",
                                  "0000000F:01:00.0"}};
  gpu::GpuSnapshot s;
  s.index = 0;
  s.temp_millicelsius = 83000;
  s.margin_temp_millicelsius = 7000;
  s.power_microwatts = 97450000;
  s.energy_microjoules = 5234567890123ULL;
  s.power_limit_microwatts = 140000000;
  s.sm_clock_mhz = 2405;
  s.sm_clock_max_mhz = 3003;
  s.mem_clock_mhz = 4266;
  s.mem_clock_max_mhz = 4266;
  s.util_gpu_percent = 96;
  s.util_mem_percent = 41;
  s.pstate = 0;
  s.clocks_event_reasons = 0x20;
  s.counters.sw_power_cap = nanoseconds{12'500'000'000};
  s.counters.sync_boost = nanoseconds{0};
  s.counters.sw_thermal = nanoseconds{173'000'000'000};
  s.counters.hw_thermal = nanoseconds{0};
  s.counters.hw_power_brake = nanoseconds{0};
  s.memory = gpu::GpuMemory{25769803776ULL, 4294967296ULL, 21474836480ULL};
  s.processes = std::vector<gpu::GpuProcess>{{4242, 48318382080ULL, "python3"}};
  r.gpu.snapshots = {s};
  r.gpu.process_memory_bytes = 48318382080ULL;
  auto line = [](std::uint32_t pid, std::string kind, std::string name,
                 std::optional<std::uint64_t> claim, std::optional<std::uint64_t> actual,
                 bool heavy, bool orphan) {
    status::WorkloadLine w;
    w.pid = pid;
    w.kind = std::move(kind);
    w.name = std::move(name);
    w.claim_bytes = claim;
    w.actual_bytes = actual;
    w.heavy = heavy;
    w.orphan = orphan;
    return w;
  };
  r.workloads = std::vector<status::WorkloadLine>{
      line(4242, "trainer", "python3 train.py", std::nullopt, 52613349376ULL, true, false),
      line(3100, "vllm", "VLLM::EngineCore", 85899345920ULL, 30064771072ULL, true, true),
      line(2900, "ollama", "ollama \"runner\"", std::nullopt, std::nullopt, false, false),
  };
  r.coexistence = "two heavy jobs share the pool";
  workloads::CoexistenceVerdict verdict;
  verdict.kind = workloads::VerdictKind::stop_first;
  verdict.heavy_count = 2;
  verdict.reserved_bytes = 138512695296ULL;  // the trainer's 49 GiB + the engine's 80 GiB claim
  verdict.oversubscribed_bytes = 10737418240ULL;
  r.coexistence_verdict = verdict;
  return r;
}

status::StatusReport bare_status_report() {
  status::StatusReport r;
  r.taken_at = SystemTime{std::chrono::seconds{1762680372}};
  r.sparkops_version = "0.1.0";
  r.system.hostname = "box";
  r.system.kernel_release = "6.1.0-13-amd64";
  r.system.architecture = "x86_64";
  r.system.os_pretty_name = "Debian GNU/Linux 12 (bookworm)";
  host::PoolView p;
  p.total_bytes = 16ULL << 30;
  p.free_now_bytes = 8ULL << 30;
  p.available_bytes = 12ULL << 30;
  p.reclaimable_bytes = 4ULL << 30;
  p.effective_available_bytes = p.available_bytes;
  p.overhead_bytes = 4ULL << 30;
  p.budget_bytes = 8ULL << 30;
  r.pool = p;
  r.gpu.backend = "none";
  r.gpu.state = gpu::GpuState::no_library;
  return r;
}

}  // namespace sparkops::test
