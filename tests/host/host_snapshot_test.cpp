#include "host/host_snapshot.hpp"

#include <filesystem>

#include <unistd.h>

#include <gtest/gtest.h>

#include "host/pool.hpp"
#include "support/test_support.hpp"

namespace sparkops::host {

namespace {
HostSnapshot snapshot(std::string_view root) {
  return read_host_snapshot(HostRoot(test::fixture(std::string("roots/") + std::string(root))));
}
constexpr std::uint64_t kGiB = 1ULL << 30;
}  // namespace

TEST(HostSnapshotFixture, Gb10Idle) {
  const HostSnapshot s = snapshot("gb10-idle");
  EXPECT_TRUE(s.notes.empty()) << s.notes.front();
  ASSERT_TRUE(s.meminfo);
  EXPECT_EQ(s.meminfo->mem_total_bytes, 127600748ULL * 1024);
  EXPECT_EQ(s.meminfo->mem_available_bytes, 118566368ULL * 1024);
  ASSERT_TRUE(s.cgroup);
  EXPECT_FALSE(s.cgroup->max_bytes.has_value());
  ASSERT_TRUE(s.psi_memory);
  EXPECT_EQ(s.psi_memory->some.avg10, 0.0);
  ASSERT_TRUE(s.vmstat);
  EXPECT_EQ(s.vmstat->oom_kill, 0u);
  EXPECT_EQ(s.hwmon.size(), 7u);
  ASSERT_EQ(s.thermal_zones.size(), 1u);
  EXPECT_EQ(s.thermal_zones[0].type, "acpitz");
  EXPECT_EQ(s.cpufreq.size(), 20u);
  ASSERT_TRUE(s.hottest);
  EXPECT_EQ(s.hottest->name, "mlx5/asic");
  EXPECT_EQ(s.hottest->temp_millicelsius, 41000);
  ASSERT_EQ(s.spbm_rails.size(), 10u);
  EXPECT_EQ(s.spbm_rails[0].name, "sys_total");
  EXPECT_EQ(s.spbm_rails[0].power_microwatts, 25112000u);
  EXPECT_EQ(s.spbm_rails[7].name, "gpu");
  EXPECT_EQ(s.spbm_rails[7].power_microwatts, 5127000u);
  ASSERT_TRUE(s.spbm);
  EXPECT_EQ(s.spbm->prochot, 0u);
  EXPECT_EQ(s.system.hostname, "spark-7f3a");
  EXPECT_TRUE(s.system.gb10_evidence.has_value());
  EXPECT_FALSE(s.kernel_log.has_value());  // not asked for
}

TEST(HostSnapshotFixture, Gb10IdleKernelLogWhenAsked) {
  HostSnapshotOptions options;
  options.kernel_log = KernelLogPolicy::include;
  const HostSnapshot s = read_host_snapshot(HostRoot(test::fixture("roots/gb10-idle")), options);
  ASSERT_TRUE(s.kernel_log);
  bool nvrm = false;
  for (const auto& r : s.kernel_log->records)
    nvrm = nvrm || r.message.find("NV_ERR_NO_MEMORY") != std::string::npos;
  EXPECT_TRUE(nvrm);
}

TEST(HostSnapshotFixture, Gb10FinetuneFreeNowFarBelowAvailable) {
  const HostSnapshot s = snapshot("gb10-finetune");
  EXPECT_TRUE(s.notes.empty());
  ASSERT_TRUE(s.meminfo);
  EXPECT_EQ(s.meminfo->mem_available_bytes, 30 * kGiB);
  EXPECT_EQ(s.meminfo->mem_free_bytes, 5 * kGiB);
  EXPECT_EQ(s.meminfo->cached_bytes, 26 * kGiB);
  const auto pool = compute_pool(*s.meminfo, s.cgroup, {});
  ASSERT_TRUE(pool);
  EXPECT_TRUE(pool->flush_suggested);
  EXPECT_EQ(pool->reclaimable_bytes, 25 * kGiB);
  ASSERT_TRUE(s.psi_memory && s.psi_memory->full);
  EXPECT_GT(s.psi_memory->some.avg10, s.psi_memory->some.avg60);
  EXPECT_EQ(s.vmstat->oom_kill, 0u);
  EXPECT_EQ(s.vmstat->pgscan_total(), 8123456u + 412345u);
  ASSERT_TRUE(s.hottest);
  EXPECT_EQ(s.hottest->name, "spbm/tj_max");
  EXPECT_EQ(s.hottest->temp_millicelsius, 76400);
  const auto gpu = std::find_if(s.spbm_rails.begin(), s.spbm_rails.end(),
                                [](const PowerRail& r) { return r.name == "gpu"; });
  ASSERT_NE(gpu, s.spbm_rails.end());
  EXPECT_EQ(gpu->power_microwatts, 80312000u);
}

TEST(HostSnapshotFixture, Gb10ThrottledHotFlatPowerAndProchot) {
  const HostSnapshot s = snapshot("gb10-throttled");
  EXPECT_TRUE(s.notes.empty());
  ASSERT_TRUE(s.hottest);
  EXPECT_EQ(s.hottest->name, "spbm/tj_max");
  EXPECT_EQ(s.hottest->temp_millicelsius, 90200);
  ASSERT_FALSE(s.spbm_rails.empty());
  EXPECT_EQ(s.spbm_rails[0].name, "sys_total");
  EXPECT_EQ(s.spbm_rails[0].power_microwatts, 101340000u);
  ASSERT_TRUE(s.spbm);
  EXPECT_EQ(s.spbm->prochot, 1u);
  EXPECT_EQ(s.spbm->pl_level, 2u);
  EXPECT_EQ(s.thermal_zones.at(0).temp_millicelsius, 87000);
}

TEST(HostSnapshotFixture, ContainerCgroupLimitBelowAvailable) {
  const HostSnapshot s = snapshot("container-cgroup");
  EXPECT_TRUE(s.notes.empty());
  ASSERT_TRUE(s.cgroup);
  EXPECT_EQ(s.cgroup->path, "/");
  EXPECT_EQ(s.cgroup->max_bytes, 32 * kGiB);
  ASSERT_TRUE(s.meminfo);
  EXPECT_GT(*s.meminfo->mem_available_bytes, 32 * kGiB);
  const auto pool = compute_pool(*s.meminfo, s.cgroup, {});
  ASSERT_TRUE(pool);
  EXPECT_EQ(pool->cgroup_headroom_bytes, 26 * kGiB);
  EXPECT_TRUE(s.spbm_rails.empty());
  EXPECT_FALSE(s.spbm.has_value());
  EXPECT_TRUE(s.cpufreq.empty());
  EXPECT_FALSE(s.system.gb10_evidence.has_value());
}

TEST(HostSnapshotFixture, X86BareHasCoretempAndNothingGb10) {
  const HostSnapshot s = snapshot("x86-bare");
  EXPECT_TRUE(s.notes.empty());
  ASSERT_TRUE(s.meminfo);
  EXPECT_EQ(s.meminfo->mem_total_bytes, 32767440ULL * 1024);
  EXPECT_FALSE(s.cgroup.has_value());
  ASSERT_TRUE(s.psi_cpu);
  EXPECT_FALSE(s.psi_cpu->full.has_value());
  EXPECT_EQ(s.vmstat->oom_kill, 1u);
  EXPECT_TRUE(s.thermal_zones.empty());
  ASSERT_EQ(s.hwmon.size(), 1u);
  EXPECT_EQ(s.hwmon[0].name, "coretemp");
  ASSERT_TRUE(s.hottest);
  EXPECT_EQ(s.hottest->name, "coretemp/Core 3");
  EXPECT_TRUE(s.spbm_rails.empty());
  EXPECT_EQ(s.cpufreq.size(), 4u);
  EXPECT_EQ(s.system.architecture, "x86_64");
}

TEST(HostSnapshotFixture, EveryRootHasTheFilesLaterCommandsNeed) {
  for (const char* root :
       {"gb10-idle", "gb10-finetune", "gb10-throttled", "container-cgroup", "x86-bare"}) {
    const auto dir = test::fixture(std::string("roots/") + root);
    for (const char* file :
         {"proc/meminfo", "proc/vmstat", "proc/pressure/memory", "proc/pressure/cpu",
          "proc/pressure/io", "proc/sys/kernel/hostname", "proc/sys/kernel/osrelease",
          "etc/os-release", "proc/sys/vm/drop_caches", "var/log/kern.log"}) {
      EXPECT_TRUE(std::filesystem::is_regular_file(dir / file)) << root << "/" << file;
    }
  }
}

TEST(HostSnapshotErrors, EmptyRootIsAllAbsentWithoutNotes) {
  test::TempDir dir;
  const HostSnapshot s = read_host_snapshot(HostRoot(dir.path()));
  EXPECT_FALSE(s.meminfo || s.cgroup || s.psi_memory || s.vmstat || s.hottest);
  EXPECT_TRUE(s.hwmon.empty() && s.thermal_zones.empty() && s.cpufreq.empty());
  EXPECT_TRUE(s.notes.empty());
}

TEST(HostSnapshotErrors, UnreadableAndMalformedPartsBecomeNotes) {
  test::TempDir dir;
  test::write_text(dir / "proc/meminfo", "MemTotal: 1 kB\nMemFree: lots kB\n");
  std::filesystem::create_directories(dir / "proc/pressure/memory");  // read fails: EISDIR
  test::write_text(dir / "proc/pressure/cpu", "some avg10=0.00 avg60=0.00 avg300=0.00 total=1\n");
  test::write_text(dir / "sys/class/hwmon/hwmon0/name", "acpitz\n");
  test::write_text(dir / "sys/class/hwmon/hwmon0/temp1_input", "n/a\n");
  const HostSnapshot s = read_host_snapshot(HostRoot(dir.path()));
  EXPECT_FALSE(s.meminfo.has_value());
  EXPECT_FALSE(s.psi_memory.has_value());
  EXPECT_TRUE(s.psi_cpu.has_value());
  ASSERT_EQ(s.notes.size(), 3u);
  EXPECT_NE(s.notes[0].find("/proc/meminfo line 2"), std::string::npos);
  EXPECT_NE(s.notes[1].find("proc/pressure/memory"), std::string::npos);
  EXPECT_NE(s.notes[2].find("hwmon0/temp1_input line 1"), std::string::npos);
}

TEST(HostSnapshotErrors, PermissionDeniedIsAbsentWithANote) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads mode-000 files; EISDIR tests cover the path";
  test::TempDir dir;
  test::write_text(dir / "proc/vmstat", "oom_kill 0\n");
  std::filesystem::permissions(dir / "proc/vmstat", std::filesystem::perms::none);
  const HostSnapshot s = read_host_snapshot(HostRoot(dir.path()));
  EXPECT_FALSE(s.vmstat.has_value());
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_NE(s.notes[0].find("Permission denied"), std::string::npos);
}

}  // namespace sparkops::host
