#include "workloads/coexistence.hpp"

#include <gtest/gtest.h>

#include "base/file_io.hpp"
#include "base/units.hpp"
#include "gpu/smi_parse.hpp"
#include "host/meminfo.hpp"
#include "support/test_support.hpp"

namespace sparkops::workloads {
namespace {

struct Scenario {
  WorkloadScan scan;
  host::PoolView pool;
};

Scenario load(const std::string& name) {
  const host::HostRoot root(test::fixture("procs/" + name));
  const auto meminfo = host::read_meminfo(root);
  EXPECT_TRUE(meminfo);
  const auto pool = host::compute_pool(*meminfo, std::nullopt, host::PoolOptions{});
  EXPECT_TRUE(pool);
  std::vector<gpu::GpuProcess> gpu;
  if (const auto text = read_file(test::fixture("procs/" + name + "/gpu-apps.csv"))) {
    // Bind the Result first: a range-for over a temporary's value() dangles.
    const auto apps = gpu::parse_smi_compute_apps(*text, gpu::kSmiQueryAppsFields);
    for (const auto& a : apps.value()) gpu.push_back(a.process);
  }
  ScanOptions options;
  options.device_total_bytes = *meminfo->mem_total_bytes;
  auto scan = scan_workloads(root, gpu, options);
  EXPECT_TRUE(scan);
  return Scenario{*scan, *pool};
}

// The skill: "a < 4GB LoRA fine-tune coexists fine beside vLLM capped at
// gpu-memory-utilization<=0.5".
TEST(Coexistence, SmallLoraBesideVllmCappedAtHalfCoexists) {
  const auto s = load("vllm_capped_lora");
  const auto v = coexistence_verdict(s.scan, 4 * kGB, s.pool);
  EXPECT_EQ(v.kind, VerdictKind::coexists) << v.summary;
  EXPECT_TRUE(v.stop.empty());
  EXPECT_EQ(v.budget_now_bytes, 52 * kGiB);
  EXPECT_GT(v.room_bytes, 4 * kGB + CoexistenceOptions{}.tight_margin_bytes);
}

// The skill: an uncapped vLLM -> stop it first, even for a small run.
TEST(Coexistence, UncappedVllmMustBeStoppedFirst) {
  const auto s = load("vllm_uncapped_orphan");
  const auto v = coexistence_verdict(s.scan, 4 * kGB, s.pool);
  EXPECT_EQ(v.kind, VerdictKind::stop_first);
  ASSERT_EQ(v.stop.size(), 2u);
  EXPECT_EQ(v.stop[0].pid, 6100u);  // the orphan first: nobody is using it
  EXPECT_EQ(v.stop[1].pid, 5000u);
  EXPECT_EQ(v.stop[1].reason, "uncapped: claims 107.7 GiB at default 0.9");
  ASSERT_EQ(v.orphans.size(), 1u);
  EXPECT_EQ(v.summary.rfind("stop 6100 (vLLM EngineCore, orphan (API server gone), uncapped: holds "
                            "50.0 GiB), then 5000 (vLLM, "
                            "uncapped: claims 107.7 GiB at default 0.9) first",
                            0),
            0u)
      << v.summary;
}

TEST(Coexistence, BigRunBesideCappedServerIsTightThenStopFirst) {
  const auto s = load("vllm_capped_lora");
  // Budget now 52 GiB: 45 GiB leaves 7 GiB, under the 8 GiB margin.
  const auto tight = coexistence_verdict(s.scan, 45 * kGiB, s.pool);
  EXPECT_EQ(tight.kind, VerdictKind::tight) << tight.summary;
  // 60 GiB does not fit beside the capped vLLM: stopping it (59.8 GiB reserved) makes room.
  const auto big = coexistence_verdict(s.scan, 60 * kGiB, s.pool);
  EXPECT_EQ(big.kind, VerdictKind::stop_first) << big.summary;
  ASSERT_EQ(big.stop.size(), 1u);
  EXPECT_EQ(big.stop[0].pid, 4242u);
}

TEST(Coexistence, MoreThanThePoolDoesNotFit) {
  const auto s = load("vllm_capped_lora");
  const auto v = coexistence_verdict(s.scan, 200 * kGiB, s.pool);
  EXPECT_EQ(v.kind, VerdictKind::does_not_fit);
  EXPECT_TRUE(v.stop.empty());
}

TEST(Coexistence, NothingRunningLeavesThePoolBudget) {
  const WorkloadScan empty;
  host::PoolView pool;
  pool.total_bytes = 120 * kGiB;
  pool.overhead_bytes = 4 * kGiB;
  pool.budget_bytes = 100 * kGiB;
  const auto v = coexistence_verdict(empty, 0, pool);
  EXPECT_EQ(v.kind, VerdictKind::coexists);
  EXPECT_EQ(v.room_bytes, 100 * kGiB);
  EXPECT_EQ(v.summary, "no heavy workload running; room for a new run: 100.0 GiB");
  // Page cache and other processes hold the rest: 110 GiB does not fit now, and nothing to stop.
  EXPECT_EQ(coexistence_verdict(empty, 110 * kGiB, pool).kind, VerdictKind::does_not_fit);
}

// Two servers capped below near capacity whose caps together promise more than the pool: neither
// is heavy alone, but the claims are a finding (not "no heavy workload running").
Workload capped_server(std::uint32_t pid, std::uint64_t claim, std::uint64_t actual) {
  Workload w;
  w.pid = pid;
  w.kind = Classification{Engine::vllm, Role::server, "vLLM"};
  w.cap = CapInfo{CapState::capped, "gpu-memory-utilization 0.45", 0.45, {}, {}};
  w.claim_bytes = claim;
  w.actual_bytes = actual;
  return w;
}

TEST(Coexistence, ClaimsBeyondThePoolAreOversubscription) {
  WorkloadScan scan;
  scan.workloads.push_back(capped_server(100, 54 * kGiB, 2 * kGiB));
  scan.workloads.push_back(capped_server(200, 50 * kGiB, 1 * kGiB));
  host::PoolView pool;
  pool.total_bytes = 120 * kGiB;
  pool.overhead_bytes = 20 * kGiB;
  pool.budget_bytes = 90 * kGiB;
  ScanOptions options;
  options.device_total_bytes = pool.total_bytes;
  options.pool_bytes = host::pool_total_budget(pool);
  for (auto& w : scan.workloads) judge_workload(w, options);
  EXPECT_FALSE(scan.workloads[0].heavy);  // 54 GiB < 0.7 x 100 GiB
  const auto v = coexistence_verdict(scan, 0, pool);
  EXPECT_EQ(v.oversubscribed_bytes, 4 * kGiB);
  EXPECT_EQ(v.kind, VerdictKind::stop_first) << v.summary;
  ASSERT_EQ(v.stop.size(), 1u);  // stopping the larger claimer is enough
  EXPECT_EQ(v.stop[0].pid, 100u);
  EXPECT_EQ(v.summary.rfind("oversubscribed by 4.0 GiB (claims 104.0 GiB > pool 100.0 GiB after "
                            "overhead): stop or re-cap 100 (vLLM",
                            0),
            0u)
      << v.summary;
  EXPECT_NE(v.oversubscription.find("4.0 GiB more than the pool"), std::string::npos);
  // A need on top: the stop list frees room for it, and the finding stays.
  const auto with_need = coexistence_verdict(scan, 10 * kGiB, pool);
  EXPECT_EQ(with_need.kind, VerdictKind::stop_first) << with_need.summary;
  EXPECT_EQ(with_need.oversubscribed_bytes, 4 * kGiB);
  // Claims that fit: no finding.
  scan.workloads.pop_back();
  EXPECT_EQ(coexistence_verdict(scan, 0, pool).oversubscribed_bytes, 0u);
  EXPECT_TRUE(coexistence_verdict(scan, 0, pool).oversubscription.empty());
}

// "Heavy" counts claims against the pool a run can use: a capped server whose claim is most of
// total - overhead is heavy even while it holds little.
TEST(Coexistence, ClaimOfMostOfThePoolIsHeavyWithLittleHeld) {
  Workload w = capped_server(100, 60 * kGiB, 1 * kGiB);
  ScanOptions options;
  options.device_total_bytes = 120 * kGiB;
  judge_workload(w, options);
  EXPECT_FALSE(w.heavy);           // 60 GiB is half the device
  options.pool_bytes = 80 * kGiB;  // 40 GiB of overhead: 60 GiB is 75 % of what is left
  judge_workload(w, options);
  EXPECT_TRUE(w.heavy);
  EXPECT_EQ(w.heavy_reason, "near capacity: claims 60.0 GiB at gpu-memory-utilization 0.45");
}

// On a discrete GPU the space is the device's memory: NVML's free now, its total at caps, and a
// workload counts its GPU bytes there, not its host RSS (which lives in the other memory).
TEST(Coexistence, OnADiscreteGpuTheRoomIsTheDevicesMemory) {
  WorkloadScan scan;
  Workload server = capped_server(100, 40 * kGiB, 30 * kGiB);
  server.gpu_bytes = 25 * kGiB;  // 5 GiB of its 30 GiB is host RSS
  scan.workloads.push_back(server);
  Workload cpu_job = capped_server(200, 0, 20 * kGiB);
  cpu_job.claim_bytes.reset();
  cpu_job.gpu_bytes = 0;  // all host memory
  scan.workloads.push_back(cpu_job);
  host::PoolView pool;
  pool.total_bytes = 64 * kGiB;
  pool.overhead_bytes = 4 * kGiB;
  pool.budget_bytes = 10 * kGiB;
  const host::DeviceMemory device{1, 80 * kGiB, 54 * kGiB};
  const CoexistenceSpace space = *coexistence_space(pool, device);
  EXPECT_EQ(space.source, host::BudgetSource::gpu_memory);
  EXPECT_EQ(space.gpu_index, 1u);
  EXPECT_EQ(space.overhead_bytes, 0u);
  EXPECT_EQ(held_in(scan.workloads[0], space), 25 * kGiB);
  EXPECT_EQ(reserved_in(scan.workloads[1], space), 0u);

  const auto v = coexistence_verdict(scan, 30 * kGiB, space);
  EXPECT_EQ(v.source, host::BudgetSource::gpu_memory);
  EXPECT_EQ(v.gpu_index, 1u);
  EXPECT_EQ(v.budget_now_bytes, 54 * kGiB);
  EXPECT_EQ(v.reserved_bytes, 40 * kGiB);      // the server's claim; the CPU job holds no GPU
  EXPECT_EQ(v.room_at_caps_bytes, 40 * kGiB);  // 80 - 40
  EXPECT_EQ(v.room_bytes, 40 * kGiB);
  EXPECT_EQ(v.kind, VerdictKind::coexists) << v.summary;
  EXPECT_NE(v.summary.find("free on GPU 1 now 54.0 GiB"), std::string::npos) << v.summary;
  // The pool would refuse the same run: 10 GiB of budget.
  EXPECT_NE(coexistence_verdict(scan, 30 * kGiB, pool).kind, VerdictKind::coexists);
  // Without a device the space is the pool's.
  EXPECT_EQ(coexistence_space(pool, std::nullopt)->source, host::BudgetSource::unified_pool);
  // Beyond the card: does not fit, naming the GPU; no page-cache flush offered.
  const auto big = coexistence_verdict(scan, 90 * kGiB, space);
  EXPECT_EQ(big.kind, VerdictKind::does_not_fit);
  EXPECT_EQ(big.summary, "does not fit: need 90.0 GiB exceeds GPU 1's memory (80.0 GiB)");
  // 70 GiB: stopping the server frees its 25 GiB now and its 40 GiB claim (the CPU job frees
  // nothing on the card).
  const auto stop = coexistence_verdict(scan, 70 * kGiB, space);
  EXPECT_EQ(stop.kind, VerdictKind::stop_first) << stop.summary;
  ASSERT_EQ(stop.stop.size(), 1u);
  EXPECT_EQ(stop.stop[0].pid, 100u);
  // 79.5 GiB: under the card's 80 GiB, over what stopping everything frees now (54 + 25 GiB).
  const auto stopped = coexistence_verdict(scan, 79 * kGiB + 512 * kMiB, space);
  EXPECT_EQ(stopped.kind, VerdictKind::does_not_fit) << stopped.summary;
  EXPECT_EQ(stopped.summary.find("flush"), std::string::npos) << stopped.summary;
}

// On a discrete GPU "heavy" is about the card: an uncapped trainer holding 13 GiB of RSS and
// nothing on the GPU is small there (it takes nothing from the card), while one holding 6 GiB on
// the GPU is heavy; on the pool both are heavy. scan_options_in makes the card's total the
// denominator of fractions and of "near capacity".
TEST(Coexistence, OnADiscreteGpuHeavyCountsTheCardsMemory) {
  const host::DeviceMemory device{0, 80 * kGiB, 70 * kGiB};
  ScanOptions pool_options;
  pool_options.device_total_bytes = 120 * kGiB;
  pool_options.pool_bytes = 116 * kGiB;
  const ScanOptions on_card = scan_options_in(pool_options, gpu_space(device));
  EXPECT_TRUE(on_card.sized_on_gpu);
  EXPECT_EQ(on_card.device_total_bytes, 80 * kGiB);
  EXPECT_EQ(on_card.pool_bytes, 80 * kGiB);
  host::PoolView pool;
  pool.total_bytes = 120 * kGiB;
  pool.overhead_bytes = 4 * kGiB;
  EXPECT_FALSE(scan_options_in(pool_options, pool_space(pool)).sized_on_gpu);

  Workload cpu_only;
  cpu_only.pid = 300;
  cpu_only.kind = Classification{Engine::trainer, Role::trainer, "torchrun"};
  cpu_only.cap = CapInfo{CapState::uncapped, "uncapped", {}, {}, {}};
  cpu_only.rss_bytes = 13 * kGiB;
  cpu_only.actual_bytes = 13 * kGiB;
  Workload on_gpu = cpu_only;
  on_gpu.pid = 400;
  on_gpu.gpu_bytes = 6 * kGiB;
  on_gpu.actual_bytes = 7 * kGiB;

  judge_workload(cpu_only, pool_options);
  EXPECT_TRUE(cpu_only.heavy);
  cpu_only.heavy = false;
  cpu_only.heavy_reason.clear();
  judge_workload(cpu_only, on_card);
  EXPECT_FALSE(cpu_only.heavy) << cpu_only.heavy_reason;
  judge_workload(on_gpu, on_card);
  EXPECT_TRUE(on_gpu.heavy);
  EXPECT_EQ(on_gpu.heavy_reason, "uncapped: holds 6.0 GiB on the GPU");

  // A vLLM at 0.75 of the card is near capacity there (0.7 x 80 GiB), though it holds 1 GiB.
  Workload server = capped_server(500, 60 * kGiB, 1 * kGiB);
  server.gpu_bytes = 1 * kGiB;
  judge_workload(server, on_card);
  EXPECT_TRUE(server.heavy);

  // The verdict on the card: the CPU-only job is not asked to stop, the GPU one is.
  WorkloadScan scan;
  scan.workloads = {cpu_only, on_gpu};
  const auto v = coexistence_verdict(scan, 10 * kGiB, gpu_space(device));
  EXPECT_EQ(v.heavy_count, 1u);
  ASSERT_EQ(v.stop.size(), 1u) << v.summary;
  EXPECT_EQ(v.stop[0].pid, 400u);
}

// Several cards: the space is one card. With the card's process list, a workload holds there what
// it holds on that card; one whose GPU memory is all on another card is not in the space (not
// counted, not heavy here); one holding no GPU memory keeps its claim on every card.
TEST(Coexistence, OnOneOfSeveralCardsOnlyThatCardsWorkloadsCount) {
  gpu::GpuSnapshot card0;
  card0.index = 0;
  card0.memory = gpu::GpuMemory{80 * kGiB, 60 * kGiB, 20 * kGiB};
  card0.processes = std::vector<gpu::GpuProcess>{{101, 20 * kGiB, "python3"}};
  gpu::GpuSnapshot card1;
  card1.index = 1;
  card1.memory = gpu::GpuMemory{48 * kGiB, 8 * kGiB, 40 * kGiB};
  card1.processes =
      std::vector<gpu::GpuProcess>{{201, 40 * kGiB, "python3"}, {101, 1 * kGiB, "python3"}};
  const std::vector<gpu::GpuSnapshot> snaps{card0, card1};

  Workload both;  // PID 100 with a worker 101 on both cards
  both.pid = 100;
  both.kind = Classification{Engine::trainer, Role::trainer, "torchrun"};
  both.cap = CapInfo{CapState::uncapped, "uncapped", {}, {}, {}};
  both.processes.resize(2);
  both.processes[0].pid = 100;
  both.processes[1].pid = 101;
  both.gpu_bytes = 21 * kGiB;
  both.heavy = true;
  Workload other = both;  // PID 200 with its worker 201 on card 1 only
  other.pid = 200;
  other.processes[0].pid = 200;
  other.processes[1].pid = 201;
  other.gpu_bytes = 40 * kGiB;
  Workload starting = capped_server(300, 30 * kGiB, 2 * kGiB);  // no GPU memory yet
  starting.processes.resize(1);
  starting.processes[0].pid = 300;

  const CoexistenceSpace zero = gpu_space(host::DeviceMemory{0, 80 * kGiB, 60 * kGiB}, snaps);
  ASSERT_TRUE(zero.card_bytes_by_pid.has_value());
  EXPECT_EQ(held_in(both, zero), 20 * kGiB);
  EXPECT_FALSE(in_space(other, zero));
  EXPECT_EQ(reserved_in(other, zero), 0u);
  EXPECT_TRUE(in_space(starting, zero));
  EXPECT_EQ(reserved_in(starting, zero), 30 * kGiB);

  WorkloadScan scan;
  scan.workloads = {both, other, starting};
  const auto v = coexistence_verdict(scan, 10 * kGiB, zero);
  EXPECT_EQ(v.reserved_bytes, 50 * kGiB);  // 20 GiB held on card 0 + the starting claim
  EXPECT_EQ(v.heavy_count, 1u);            // PID 200 is heavy on card 1, not here
  ASSERT_EQ(v.stop.size(), 1u) << v.summary;
  EXPECT_EQ(v.stop[0].pid, 100u);

  const CoexistenceSpace one = gpu_space(host::DeviceMemory{1, 48 * kGiB, 8 * kGiB}, snaps);
  EXPECT_EQ(held_in(both, one), 1 * kGiB);
  EXPECT_EQ(held_in(other, one), 40 * kGiB);
  // Without per-card lists (a captured nvidia-smi file), a workload's GPU bytes count whole.
  const CoexistenceSpace unknown = gpu_space(host::DeviceMemory{0, 80 * kGiB, 60 * kGiB});
  EXPECT_FALSE(unknown.card_bytes_by_pid.has_value());
  EXPECT_EQ(held_in(other, unknown), 40 * kGiB);
}

// README "Exit codes": one rule for procs and plan --beside.
TEST(Coexistence, OneExitCodeRule) {
  CoexistenceVerdict v;
  EXPECT_EQ(coexistence_exit_code(v, false), 0);
  EXPECT_EQ(coexistence_exit_code(v, true), 0);
  v.kind = VerdictKind::tight;
  EXPECT_EQ(coexistence_exit_code(v, true), 3);
  EXPECT_EQ(coexistence_exit_code(v, false), 0);  // no question asked: nothing is tight
  v.kind = VerdictKind::stop_first;
  EXPECT_EQ(coexistence_exit_code(v, true), 1);
  EXPECT_EQ(coexistence_exit_code(v, false), 0);
  v.kind = VerdictKind::does_not_fit;
  EXPECT_EQ(coexistence_exit_code(v, true), 1);
  v.kind = VerdictKind::coexists;
  v.oversubscribed_bytes = 1;  // a finding with or without a question
  EXPECT_EQ(coexistence_exit_code(v, false), 1);
  EXPECT_EQ(coexistence_exit_code(v, true), 1);
}

}  // namespace
}  // namespace sparkops::workloads
