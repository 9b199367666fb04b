// The status module: collect_status over fixture roots and the fake NVML, its table and JSON pinned
// by golden files (built in-process with a ManualClock so the bytes are stable), and the verdict
// fields and sentences it gives. The binary's flags and exit codes are in
// tests/cli/status_test.cpp.

#include <ostream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/units.hpp"
#include "gpu/open_source.hpp"
#include "status/status_json.hpp"
#include "status/status_render.hpp"
#include "status/status_report.hpp"
#include "support/fake_nvml.hpp"
#include "support/test_support.hpp"

namespace sparkops::status {
namespace {

struct Case {
  const char* root;
  const char* scenario;  // nullptr: no GPU
};

// ctest names carry the parameter: print root and scenario, not the struct's bytes (pointers).
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.root << " + " << (c.scenario != nullptr ? c.scenario : "no GPU");
}

StatusReport collect(const Case& c) {
  std::unique_ptr<gpu::GpuSource> gpu;
  if (c.scenario != nullptr) {
    test::use_nvml_scenario(c.scenario);
    gpu::GpuOpenOptions o;
    o.nvml_library = FAKE_NVML_LIB;
    o.choice = gpu::GpuBackendChoice::nvml;
    gpu = gpu::open_gpu_source(o);
  } else {
    gpu = gpu::make_null_gpu_source(gpu::GpuState::no_library,
                                    "no NVIDIA driver (libnvidia-ml.so.1 not found)");
  }
  ManualClock clock;
  StatusReport r = collect_status(host::HostRoot(test::fixture(std::string("roots/") + c.root)),
                                  *gpu, clock, {});
  r.sparkops_version = "0.0.0-test";  // keep goldens stable across releases
  return r;
}

class StatusGolden : public ::testing::TestWithParam<Case> {};

TEST_P(StatusGolden, TableAndJsonMatchGolden) {
  const Case c = GetParam();
  const StatusReport r = collect(c);
  const std::string base =
      std::string("golden/status/") + c.root + (c.scenario ? std::string("+") + c.scenario : "");
  test::expect_golden(base + ".txt", render_status(r));
  test::expect_golden(base + ".json", status_to_json(r).dump(2) + "\n");
}

INSTANTIATE_TEST_SUITE_P(FixtureRoots, StatusGolden,
                         ::testing::Values(Case{"gb10-idle", "gb10"}, Case{"gb10-finetune", "gb10"},
                                           Case{"gb10-throttled", "gb10-counters-advancing"},
                                           Case{"container-cgroup", "gb10"},
                                           Case{"x86-bare", nullptr}, Case{"x86-bare", "h200"}),
                         [](const auto& test_param) {
                           std::string n =
                               std::string(test_param.param.root) + "_" +
                               (test_param.param.scenario ? test_param.param.scenario : "nogpu");
                           for (char& ch : n) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return n;
                         });

TEST(StatusReport, Gb10MemoryIsUnifiedNotZero) {
  const StatusReport r = collect({"gb10-idle", "gb10"});
  ASSERT_EQ(r.gpu.snapshots.size(), 1u);
  EXPECT_FALSE(r.gpu.snapshots[0].memory.has_value());
  const auto j = status_to_json(r);
  EXPECT_EQ(j["gpu"]["devices"][0]["memory"]["unified"], true);
  EXPECT_FALSE(j["gpu"]["devices"][0]["memory"].contains("total_bytes"));
  EXPECT_TRUE(j["gpu"]["devices"][0]["power_limit_watts"].is_null());
}

TEST(StatusReport, ProcessMemoryIsSummedAndUnknownIsSkipped) {
  const StatusReport r = collect({"gb10-idle", "gb10"});
  ASSERT_TRUE(r.gpu.process_memory_bytes);
  EXPECT_EQ(*r.gpu.process_memory_bytes, 20064501760u);
}

TEST(StatusReport, CgroupLimitLowerThanAvailableBecomesTheBudgetBase) {
  const StatusReport r = collect({"container-cgroup", nullptr});
  ASSERT_TRUE(r.pool);
  ASSERT_TRUE(r.pool->cgroup_headroom_bytes);
  EXPECT_LT(*r.pool->cgroup_headroom_bytes, r.pool->available_bytes);
  EXPECT_EQ(r.pool->budget_bytes, *r.pool->cgroup_headroom_bytes - r.pool->overhead_bytes);
}

TEST(StatusReport, FinetuneWithBigPageCacheSuggestsFlush) {
  const StatusReport r = collect({"gb10-finetune", "gb10"});
  ASSERT_TRUE(r.pool);
  EXPECT_TRUE(r.pool->flush_suggested);
  EXPECT_NE(render_status(r).find("sudo sparkops flush"), std::string::npos);
}

TEST(StatusReport, NoGpuIsOneLineAndTheRestStillWorks) {
  const StatusReport r = collect({"x86-bare", nullptr});
  const std::string table = render_status(r);
  EXPECT_NE(table.find("GPU   none: no NVIDIA driver"), std::string::npos);
  EXPECT_NE(table.find("budget"), std::string::npos);
  EXPECT_TRUE(r.pool.has_value());
}

TEST(StatusReport, UnreadableMeminfoLeavesPoolAbsentWithANote) {
  test::TempDir root;
  test::write_text(root / "proc/version", "Linux\n");
  auto gpu = gpu::make_null_gpu_source(gpu::GpuState::no_library, "none");
  ManualClock clock;
  const StatusReport r = collect_status(host::HostRoot(root.path()), *gpu, clock, {});
  EXPECT_FALSE(r.pool.has_value());
  ASSERT_FALSE(r.notes.empty());
  EXPECT_NE(r.notes.back().find("meminfo"), std::string::npos);
}

TEST(StatusReport, HeavyUncappedVllmAndOrphanAreNamedWithTheStopAdvice) {
  // A /proc tree built from the corpus command lines (tests/fixtures/procs): vLLM at the default
  // 0.9 and an EngineCore whose API server is gone.
  auto gpu = gpu::make_null_gpu_source(gpu::GpuState::no_library, "none");
  ManualClock clock;
  const StatusReport r =
      collect_status(host::HostRoot(test::fixture("procs/vllm_uncapped_orphan")), *gpu, clock, {});
  ASSERT_TRUE(r.workloads);
  ASSERT_EQ(r.workloads->size(), 2u);
  EXPECT_EQ((*r.workloads)[0].pid, 5000u);
  EXPECT_EQ((*r.workloads)[0].kind, "vllm");
  EXPECT_TRUE((*r.workloads)[0].heavy);
  EXPECT_NE(r.coexistence.find("stop PID 6100"), std::string::npos) << r.coexistence;
  EXPECT_NE(render_status(r).find("one heavy job at a time"), std::string::npos);
}

TEST(StatusReport, QuietPoolSaysHowMuchANewRunCanTake) {
  const StatusReport r = collect({"gb10-idle", "gb10"});
  ASSERT_TRUE(r.workloads);
  EXPECT_TRUE(r.workloads->empty());
  EXPECT_NE(r.coexistence.find("a new run can take up to"), std::string::npos);
}

// The skill example's tree with 70 GiB of overhead: vLLM's 0.5 cap claims more than the pool has
// left. The verdict is fields in --json (a script never parses the sentence) and the sentence
// says the pool is oversubscribed, by how much, not "one heavy job at a time".
TEST(StatusReport, OversubscriptionIsWordedAsSuchAndGivenAsFields) {
  auto gpu = gpu::make_null_gpu_source(gpu::GpuState::no_library, "none");
  ManualClock clock;
  StatusOptions options;
  options.pool.overhead_bytes = 70ULL << 30;
  const StatusReport r =
      collect_status(host::HostRoot(test::fixture("procs/vllm_capped_lora")), *gpu, clock, options);
  ASSERT_TRUE(r.coexistence_verdict);
  const auto& v = *r.coexistence_verdict;
  ASSERT_GT(v.oversubscribed_bytes, 0u);
  const std::string text = render_status(r);
  EXPECT_NE(text.find("the pool is oversubscribed by " + format_bytes(v.oversubscribed_bytes)),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("one heavy job at a time"), std::string::npos) << text;
  const auto j = status_to_json(r);
  const auto& f = j["coexistence_verdict"];
  EXPECT_EQ(f["verdict"], "stop_first");
  EXPECT_EQ(f["oversubscribed_bytes"].get<std::uint64_t>(), v.oversubscribed_bytes);
  EXPECT_EQ(f["room_bytes"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(f["heavy_count"].get<std::size_t>(), v.heavy_count);
  EXPECT_EQ(f["stop_pids"][0], 4242);
  EXPECT_EQ(j["coexistence"], r.coexistence);  // the sentence beside the fields
}

TEST(StatusReport, QuietPoolVerdictFields) {
  const StatusReport r = collect({"gb10-idle", "gb10"});
  const auto j = status_to_json(r);
  EXPECT_EQ(j["coexistence_verdict"]["heavy_count"], 0);
  EXPECT_EQ(j["coexistence_verdict"]["oversubscribed_bytes"], 0);
  EXPECT_GT(j["coexistence_verdict"]["room_bytes"].get<std::uint64_t>(), 0u);
  EXPECT_TRUE(j["coexistence_verdict"]["stop_pids"].empty());
}

}  // namespace
}  // namespace sparkops::status
