#include "model_fixture.hpp"

namespace sparkops::tui::test {

namespace {

constexpr std::uint64_t kGiB = 1ULL << 30;
const SystemTime kAt{std::chrono::seconds{1762680372}};  // 2025-11-09T09:26:12Z

status::StatusReport base_report() {
  status::StatusReport r;
  r.taken_at = kAt;
  r.system.hostname = "spark-7f3a";
  host::PoolView p;
  p.total_bytes = 119 * kGiB + kGiB / 2;
  p.free_now_bytes = 6 * kGiB;
  p.available_bytes = 31 * kGiB;
  p.reclaimable_bytes = 25 * kGiB;
  p.effective_available_bytes = p.available_bytes;
  p.overhead_bytes = 4 * kGiB;
  p.budget_bytes = 27 * kGiB;
  p.flush_suggested = true;
  r.pool = p;
  host::Psi psi;
  psi.some = host::PsiLine{12.5, 6.0, 2.0, 123456};
  psi.full = host::PsiLine{1.0, 0.5, 0.1, 2345};
  r.memory_pressure = psi;
  r.hottest_sensor = host::SensorReading{"spbm/soc", 84'300};
  r.spbm_rails = {{"sys_total", 131'200'000}, {"soc_pkg", 104'000'000}, {"gpu", 97'600'000}};
  host::SpbmStatus spbm;
  spbm.prochot = 0;
  r.spbm = spbm;
  return r;
}

}  // namespace

TopModel busy_gb10_model() {
  TopModel m;
  m.report = base_report();
  status::StatusReport& r = m.report;
  r.gpu.backend = "nvml";
  r.gpu.state = gpu::GpuState::ok;
  r.gpu.devices = {gpu::GpuDevice{0, "NVIDIA GB10", "GPU-2dee1e25", "0000000F:01:00.0"}};
  gpu::GpuSnapshot s;
  s.index = 0;
  s.temp_millicelsius = 83'000;
  s.power_microwatts = 97'400'000;
  s.sm_clock_mhz = 2190;
  s.sm_clock_max_mhz = 2418;
  s.util_gpu_percent = 96;
  s.pstate = 0;
  s.clocks_event_reasons = 0;
  r.gpu.snapshots = {s};

  status::WorkloadLine trainer;
  trainer.pid = 114687;
  trainer.kind = "trainer";
  trainer.name = "python3";
  trainer.actual_bytes = 58 * kGiB;
  trainer.rss_bytes = 9 * kGiB;
  trainer.pss_bytes = 8 * kGiB;
  trainer.gpu_bytes = 50 * kGiB;
  trainer.heavy = true;
  trainer.cap = "uncapped";
  trainer.cap_text = "PYTORCH_CUDA_ALLOC_CONF caps nothing";
  trainer.age = std::chrono::milliseconds{3 * 3600 * 1000 + 12 * 60 * 1000};
  status::WorkloadLine vllm;
  vllm.pid = 4174;
  vllm.kind = "vllm";
  vllm.name = "python3";
  vllm.claim_bytes = 59 * kGiB + 8 * kGiB / 10;
  vllm.actual_bytes = 31 * kGiB;
  vllm.rss_bytes = 3 * kGiB;
  vllm.pss_bytes = 3 * kGiB;
  vllm.gpu_bytes = 28 * kGiB;
  vllm.heavy = false;
  vllm.cap = "capped";
  vllm.cap_text = "gpu-memory-utilization 0.5";
  vllm.age = std::chrono::milliseconds{26 * 3600 * 1000};
  status::WorkloadLine orphan;
  orphan.pid = 6100;
  orphan.kind = "vllm";
  orphan.name = "VLLM::EngineCor";
  orphan.actual_bytes = 4 * kGiB;
  orphan.rss_bytes = 4 * kGiB;
  orphan.pss_bytes = 4 * kGiB;
  orphan.orphan = true;
  orphan.cap = "uncapped";
  orphan.cap_text = "default 0.9";
  orphan.age = std::chrono::milliseconds{2 * 86400 * 1000LL};
  r.workloads = std::vector<status::WorkloadLine>{vllm, trainer, orphan};
  r.coexistence =
      "one heavy job at a time: stop PID 6100 (vLLM EngineCore, orphan (API server gone)) before "
      "starting a trainer";
  r.coexistence_stop_first = true;

  m.refreshes = 40;
  for (int i = 0; i < 40; ++i) {
    m.pool_available_bytes.push_back(static_cast<double>((60 - i * 29 / 39) * kGiB));
    m.pool_free_bytes.push_back(static_cast<double>((20 - i * 14 / 39) * kGiB));
  }
  GpuActivity a;
  a.index = 0;
  a.interval = std::chrono::seconds{1};
  a.counter_deltas.sw_power_cap = std::chrono::milliseconds{820};
  a.counter_deltas.sw_thermal = std::chrono::nanoseconds{0};
  a.counter_deltas.hw_thermal = std::chrono::nanoseconds{0};
  a.counter_deltas.hw_power_brake = std::chrono::nanoseconds{0};
  a.open_causes = {sampling::ThrottleCause::sw_power_cap, sampling::ThrottleCause::platform_cap};
  for (int i = 0; i < 40; ++i) {
    a.temperature_celsius.push_back(70.0 + i * 13.0 / 39.0);
    a.power_watts.push_back(i < 10 ? 60.0 + i * 4.0 : 97.0 + (i % 3) * 0.5);
  }
  a.temperature_celsius[20] = std::nullopt;  // one refresh without a reading: a gap
  m.gpus = {a};
  m.since_start.elapsed = std::chrono::seconds{40};
  m.since_start.refaults = 182'344;
  m.since_start.refaults_per_second = 4'100;
  m.since_start.major_faults = 1'207;
  m.since_start.oom_kills = 1;
  auto at = [](int ago) { return kAt - std::chrono::seconds{ago}; };
  m.events = {
      {at(39), EventSeverity::alert, "2 heavy workloads at once: one heavy job at a time"},
      {at(30), EventSeverity::alert,
       "start sw_power_cap gpu=0 bit=clear counter_delta_s=0.820 interval_s=1.000"},
      {at(24), EventSeverity::alert,
       "start platform_cap gpu=0 power_w=97.4 ceiling_w=100.0 temp_c=81.0 climb_c=3.0"},
      {at(12), EventSeverity::warning, "psi_some: PSI memory some avg10 12.5% (was 4.0%)"},
      {at(5), EventSeverity::alert, "oom_kill: vmstat oom_kill +1"},
      {at(2), EventSeverity::info, "workload pid=7001 gone"},
  };
  return m;
}

TopModel quiet_model_without_gpu() {
  TopModel m;
  m.report = base_report();
  m.report.gpu.backend = "none";
  m.report.gpu.state = gpu::GpuState::no_library;
  m.report.gpu.detail = "libnvidia-ml.so.1 not found";
  m.report.workloads = std::vector<status::WorkloadLine>{};
  m.report.coexistence = "a new run can take up to 27.0 GiB beside what is running";
  m.refreshes = 1;
  m.pool_available_bytes = {static_cast<double>(31 * kGiB)};
  m.pool_free_bytes = {static_cast<double>(6 * kGiB)};
  return m;
}

}  // namespace sparkops::tui::test
