#include "workloads/scan.hpp"

#include <algorithm>

#include <gtest/gtest.h>

#include "base/file_io.hpp"
#include "base/units.hpp"
#include "gpu/smi_parse.hpp"
#include "support/test_support.hpp"

namespace sparkops::workloads {
namespace {

constexpr std::uint64_t kGb10Total = 125514548ULL * 1024;

std::vector<gpu::GpuProcess> gpu_apps(const std::string& scenario) {
  const auto text = read_file(test::fixture("procs/" + scenario + "/gpu-apps.csv"));
  if (!text) return {};
  const auto apps = gpu::parse_smi_compute_apps(*text, gpu::kSmiQueryAppsFields);
  EXPECT_TRUE(apps) << apps.error().detail;
  std::vector<gpu::GpuProcess> out;
  for (const auto& a : *apps) out.push_back(a.process);
  return out;
}

WorkloadScan scan_of(const std::string& scenario) {
  ScanOptions options;
  options.device_total_bytes = kGb10Total;
  auto scan = scan_workloads(host::HostRoot(test::fixture("procs/" + scenario)), gpu_apps(scenario),
                             options);
  EXPECT_TRUE(scan) << scan.error().detail;
  return scan ? *scan : WorkloadScan{};
}

const Workload* find(const WorkloadScan& scan, std::uint32_t pid) {
  const auto it = std::find_if(scan.workloads.begin(), scan.workloads.end(),
                               [&](const Workload& w) { return w.pid == pid; });
  return it == scan.workloads.end() ? nullptr : &*it;
}

std::vector<std::uint32_t> roots(const WorkloadScan& scan) {
  std::vector<std::uint32_t> out;
  for (const auto& w : scan.workloads) out.push_back(w.pid);
  return out;
}

TEST(ScanFixture, CappedVllmAndSmallLoraAreTwoLightWorkloads) {
  const auto scan = scan_of("vllm_capped_lora");
  EXPECT_EQ(roots(scan), (std::vector<std::uint32_t>{4242, 5150}));
  const auto* vllm = find(scan, 4242);
  ASSERT_NE(vllm, nullptr);
  ASSERT_EQ(vllm->processes.size(), 2u);
  EXPECT_EQ(vllm->processes[1].pid, 4301u);
  EXPECT_EQ(vllm->processes[1].kind.label, "vLLM EngineCore");
  EXPECT_EQ(vllm->cap.state, CapState::capped);
  EXPECT_EQ(format_bytes(vllm->claim_bytes.value()), "59.9 GiB");
  EXPECT_EQ(vllm->gpu_bytes, 56320ULL * kMiB);
  EXPECT_EQ(vllm->actual_bytes, (1700ULL + 2900ULL + 56320ULL) * kMiB);  // PSS + GPU
  EXPECT_FALSE(vllm->heavy);
  EXPECT_FALSE(vllm->orphan);
  const auto* trl = find(scan, 5150);
  ASSERT_NE(trl, nullptr);
  EXPECT_EQ(trl->kind.label, "TRL");
  EXPECT_EQ(trl->actual_bytes, (2100ULL + 1200ULL) * kMiB);
  EXPECT_FALSE(trl->heavy);
  EXPECT_TRUE(trl->processes[0].env_readable);
  EXPECT_EQ(trl->processes[0].age, std::chrono::milliseconds(600000));
  EXPECT_EQ(trl->processes[0].started_unix_seconds, 1762330000 + 350135);
  EXPECT_TRUE(trainer_running(scan));
  EXPECT_TRUE(scan.gpu_outside.empty());
}

TEST(ScanFixture, UncappedVllmIsHeavyAndOrphanedEngineIsFlagged) {
  const auto scan = scan_of("vllm_uncapped_orphan");
  EXPECT_EQ(roots(scan), (std::vector<std::uint32_t>{5000, 6100}));
  const auto* vllm = find(scan, 5000);
  ASSERT_NE(vllm, nullptr);
  EXPECT_TRUE(vllm->heavy);
  EXPECT_EQ(vllm->heavy_reason, "uncapped: claims 107.7 GiB at default 0.9");
  EXPECT_FALSE(vllm->orphan);
  const auto* orphan = find(scan, 6100);
  ASSERT_NE(orphan, nullptr);
  EXPECT_TRUE(orphan->orphan);
  EXPECT_TRUE(orphan->heavy);
  EXPECT_EQ(orphan->processes.size(), 3u);
  EXPECT_EQ(orphan->heavy_reason, "orphan (API server gone), uncapped: holds 50.0 GiB");
  ASSERT_EQ(scan.gpu_outside.size(), 1u);
  EXPECT_EQ(scan.gpu_outside[0].pid, 77777u);
  EXPECT_FALSE(trainer_running(scan));
}

TEST(ScanFixture, OllamaServerOwnsItsRunnerAndClientIsIgnored) {
  const auto scan = scan_of("ollama");
  EXPECT_EQ(roots(scan), (std::vector<std::uint32_t>{1200, 1400}));
  const auto* serve = find(scan, 1200);
  ASSERT_NE(serve, nullptr);
  ASSERT_EQ(serve->processes.size(), 2u);
  EXPECT_EQ(serve->processes[1].kind.role, Role::runner);
  EXPECT_EQ(serve->cap.text, "uncapped (max 1 models, keep-alive -1, gpu-overhead 2.0 GiB)");
  EXPECT_TRUE(serve->heavy);
  // Another user's server: environ and smaps_rollup refused, the scan goes on with RSS.
  const auto* other = find(scan, 1400);
  ASSERT_NE(other, nullptr);
  EXPECT_FALSE(other->processes[0].env_readable);
  EXPECT_FALSE(other->processes[0].pss_bytes);
  EXPECT_EQ(other->pss_bytes, 250ULL * kMiB);
  EXPECT_EQ(other->cap.text, "uncapped (environment unreadable)");
  EXPECT_GE(scan.stats.files_unreadable, 2u);
}

TEST(ScanFixture, LlamaCppIsFixedAtLoadAndHeavyOnlyNearCapacity) {
  const auto scan = scan_of("llama_cpp");
  EXPECT_EQ(roots(scan), (std::vector<std::uint32_t>{2100, 2200, 2300, 2400}));
  EXPECT_EQ(find(scan, 2100)->cap.state, CapState::fixed_at_load);
  EXPECT_FALSE(find(scan, 2200)->heavy);
  EXPECT_TRUE(find(scan, 2300)->heavy);
  EXPECT_EQ(find(scan, 2300)->heavy_reason, "near capacity: holds 90.0 GiB");
  EXPECT_EQ(find(scan, 2400)->kind.label, "llama-cli");
}

TEST(ScanFixture, LaunchersOwnTheirWorkers) {
  const auto scan = scan_of("trainers");
  EXPECT_EQ(roots(scan), (std::vector<std::uint32_t>{3000, 3100, 3200, 3300, 3400, 3500, 3600, 3700,
                                                     3800, 3900, 3950, 4000}));
  const auto* torchrun = find(scan, 3000);
  ASSERT_EQ(torchrun->processes.size(), 5u);
  EXPECT_EQ(torchrun->processes[1].kind.role, Role::worker);
  EXPECT_EQ(torchrun->processes[1].kind.label, "python Train_dist.py (torchrun worker)");
  EXPECT_TRUE(torchrun->heavy);
  EXPECT_EQ(find(scan, 3200)->processes[1].kind.label,
            "python example_chat_completion.py (torchrun worker)");
  EXPECT_EQ(find(scan, 3100)->processes[1].kind.label,
            "python train_gsm8k_deepspeed.py (accelerate worker)");
  EXPECT_EQ(find(scan, 3300)->kind.label, "axolotl");
  EXPECT_EQ(find(scan, 3500)->kind.label, "MLX-LM");
  EXPECT_EQ(find(scan, 3600)->kind.label, "llama.cpp finetune");
  EXPECT_EQ(find(scan, 3700)->kind.label, "NeMo");
  EXPECT_EQ(find(scan, 3800)->kind.label, "LLaMA-Factory");
  EXPECT_EQ(find(scan, 3900)->kind.label, "torchtune");
  EXPECT_EQ(find(scan, 3950)->kind.label, "Unsloth");
  EXPECT_EQ(find(scan, 4000)->kind.engine, Engine::jupyter);
  EXPECT_FALSE(find(scan, 3400)->heavy);  // 2 GiB uncapped: small
  EXPECT_TRUE(trainer_running(scan));
}

TEST(ScanFixture, ServersOfEveryKind) {
  const auto scan = scan_of("servers");
  EXPECT_EQ(roots(scan),
            (std::vector<std::uint32_t>{7000, 7100, 7200, 7300, 7400, 7450, 7500, 7600}));
  EXPECT_EQ(find(scan, 7000)->processes.size(), 3u);
  EXPECT_DOUBLE_EQ(find(scan, 7000)->cap.fraction.value(), 0.6);
  EXPECT_FALSE(find(scan, 7000)->heavy);
  EXPECT_TRUE(find(scan, 7100)->heavy);
  EXPECT_EQ(find(scan, 7100)->heavy_reason,
            "near capacity: claims 95.8 GiB at mem-fraction-static 0.8");
  EXPECT_TRUE(find(scan, 7200)->heavy);
  EXPECT_DOUBLE_EQ(find(scan, 7300)->cap.fraction.value(), 0.95);
  EXPECT_DOUBLE_EQ(find(scan, 7400)->cap.fraction.value(), 0.22);
  EXPECT_EQ(find(scan, 7450)->claim_bytes, 8ULL << 30);
  EXPECT_EQ(find(scan, 7500)->processes.size(), 2u);
  EXPECT_EQ(find(scan, 7600)->kind.engine, Engine::tensorrt_llm);
}

TEST(ScanFixture, InAContainerGpuPidsAreNotJoined) {
  const auto scan = scan_of("container");
  EXPECT_TRUE(scan.nested_pid_namespace);
  ASSERT_EQ(scan.workloads.size(), 1u);
  EXPECT_EQ(scan.workloads[0].gpu_bytes, 0u);  // host PID 40 is not our PID 40
  ASSERT_EQ(scan.gpu_outside.size(), 2u);
  EXPECT_EQ(scan.gpu_outside[0].pid, 40u);
  EXPECT_EQ(scan.gpu_outside[1].pid, 912301u);
}

TEST(ScanFixture, VanishedAndUnreadablePidsNeverFailTheScan) {
  const auto scan = scan_of("vanishing");
  EXPECT_EQ(scan.stats.pids_listed, 12u);
  EXPECT_EQ(scan.stats.pids_vanished, 3u);  // 8100 no stat, 8200 no cmdline, 8500 garbage stat
  EXPECT_EQ(roots(scan), (std::vector<std::uint32_t>{8000, 8400}));
  const auto* axolotl = find(scan, 8400);
  EXPECT_FALSE(axolotl->processes[0].rss_bytes);
  EXPECT_FALSE(axolotl->processes[0].env_readable);
  EXPECT_GE(scan.stats.files_unreadable, 3u);
}

TEST(ScanFixture, MissingProcIsAnError) {
  test::TempDir dir;
  const auto scan = scan_workloads(host::HostRoot(dir.path()), {}, ScanOptions{});
  ASSERT_FALSE(scan);
  EXPECT_EQ(scan.error().code, Errc::not_found);
}

TEST(ScanFixture, UnclassifiedGpuHolderIsListedAsOther) {
  ScanOptions options;
  options.device_total_bytes = kGb10Total;
  const std::vector<gpu::GpuProcess> gpu = {gpu::GpuProcess{991, 3ULL << 30, "tail"}};
  const auto scan =
      scan_workloads(host::HostRoot(test::fixture("procs/vllm_capped_lora")), gpu, options);
  ASSERT_TRUE(scan);
  const auto* other = find(*scan, 991);
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->kind.engine, Engine::other);
  EXPECT_EQ(other->kind.label, "GPU process (tail)");
}

TEST(GpuJoin, SnapshotsFlattenAndSumPerPid) {
  gpu::GpuSnapshot a, b;
  a.processes = std::vector<gpu::GpuProcess>{{7, 100, "x"}, {3, std::nullopt, "y"}};
  b.processes = std::vector<gpu::GpuProcess>{{7, 50, "x"}};
  const auto flat = gpu_processes_of({a, b});
  ASSERT_EQ(flat.size(), 2u);
  EXPECT_EQ(flat[0].pid, 3u);
  EXPECT_FALSE(flat[0].used_bytes);
  EXPECT_EQ(flat[1].used_bytes, 150u);
}

}  // namespace
}  // namespace sparkops::workloads
