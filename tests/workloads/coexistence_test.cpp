#include "workloads/coexistence.hpp"

#include <gtest/gtest.h>

#include "base/file_io.hpp"
#include "base/units.hpp"
#include "gpu/smi_parse.hpp"
#include "host/meminfo.hpp"
#include "support/test_support.hpp"

namespace sparkops {
namespace {

struct Scenario {
  WorkloadScan scan;
  PoolView pool;
};

Scenario load(const std::string& name) {
  const HostRoot root(test::fixture("procs/" + name));
  const auto meminfo = read_meminfo(root);
  EXPECT_TRUE(meminfo);
  const auto pool = compute_pool(*meminfo, std::nullopt, PoolOptions{});
  EXPECT_TRUE(pool);
  std::vector<GpuProcess> gpu;
  if (const auto text = read_file(test::fixture("procs/" + name + "/gpu-apps.csv"))) {
    // Bind the Result first: a range-for over a temporary's value() dangles.
    const auto apps = parse_smi_compute_apps(*text, kSmiQueryAppsFields);
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
  PoolView pool;
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

}  // namespace
}  // namespace sparkops
