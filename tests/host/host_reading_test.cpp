// read_host_reading (every sensor walked) and HostProbe (held files) give the same host half of a
// sample; a sensor that vanishes is dropped and found again.
#include "host/host_probe.hpp"

#include <filesystem>
#include <vector>

#include <gtest/gtest.h>

#include "host/host_reading.hpp"
#include "support/test_support.hpp"

namespace sparkops::host {
namespace {

TEST(HostReading, ReadsHostColumnsFromTheRoot) {
  const HostRoot root(test::fixture("roots/gb10-finetune"));
  const HostReading h = read_host_reading(root);
  EXPECT_TRUE(h.mem_available_bytes.has_value());
  EXPECT_TRUE(h.psi_mem_some_total_us.has_value());
  EXPECT_TRUE(h.major_faults_total.has_value());
  EXPECT_TRUE(h.hottest_sensor.has_value());
  EXPECT_TRUE(h.spbm_sys_total_microwatts.has_value());
}

TEST(HostReading, MissingHostFilesAreAbsentNotErrors) {
  test::TempDir empty;
  const HostReading h = read_host_reading(HostRoot(empty.path()));
  EXPECT_FALSE(h.mem_total_bytes.has_value());
  EXPECT_FALSE(h.hottest_sensor.has_value());
  EXPECT_FALSE(h.psi_mem_full_total_us.has_value());
}

TEST(HostProbe, GivesTheSameReadingAsTheFullWalkOnEveryFixtureRoot) {
  for (const char* name :
       {"gb10-idle", "gb10-finetune", "gb10-throttled", "container-cgroup", "x86-bare"}) {
    const HostRoot root(test::fixture(std::string("roots/") + name));
    HostProbe probe(root);
    const HostReading full = read_host_reading(root);
    for (int tick = 0; tick < 2; ++tick) {
      const HostReading fast = probe.read();
      EXPECT_EQ(fast.hottest_sensor, full.hottest_sensor) << name;
      EXPECT_EQ(fast.hottest_millicelsius, full.hottest_millicelsius) << name;
      EXPECT_EQ(fast.spbm_sys_total_microwatts, full.spbm_sys_total_microwatts) << name;
      EXPECT_EQ(fast.spbm_gpu_microwatts, full.spbm_gpu_microwatts) << name;
      EXPECT_EQ(fast.spbm_dc_input_microwatts, full.spbm_dc_input_microwatts) << name;
      EXPECT_EQ(fast.mem_available_bytes, full.mem_available_bytes) << name;
      EXPECT_EQ(fast.major_faults_total, full.major_faults_total) << name;
    }
  }
}

TEST(HostProbe, VanishedSensorIsDroppedAndFoundAgainWhenItReturns) {
  test::TempDir dir;
  std::filesystem::copy(test::fixture("roots/gb10-idle"), dir.path(),
                        std::filesystem::copy_options::recursive);
  HostProbe probe{HostRoot(dir.path())};
  const HostReading before = probe.read();
  ASSERT_TRUE(before.hottest_sensor.has_value());
  // Remove every temperature file: the next reads see no sensor, not an error.
  std::vector<std::filesystem::path> removed;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir.path() / "sys")) {
    const auto n = e.path().filename().string();
    if ((n.rfind("temp", 0) == 0 && n.find("_input") != std::string::npos) || n == "temp")
      removed.push_back(e.path());
  }
  std::vector<std::pair<std::filesystem::path, std::string>> saved;
  for (const auto& p : removed) saved.emplace_back(p, test::slurp(p));
  for (const auto& p : removed) std::filesystem::remove(p);
  EXPECT_FALSE(probe.read().hottest_sensor.has_value());
  EXPECT_FALSE(probe.read().hottest_sensor.has_value());
  for (const auto& [p, text] : saved) test::write_text(p, text);
  std::optional<std::string> found;
  for (int i = 0; i < 8 && !found; ++i)
    found = probe.read().hottest_sensor;  // back-off 1, 2, 4 reads
  EXPECT_EQ(found, before.hottest_sensor);
}

// A hot-unplugged power rail in a captured root: the file is deleted between ticks (it stays
// readable through the probe's descriptor, as a regular file does). The next reading drops that
// rail and keeps the others, the sample goes on, and the rail returns when its file does.
TEST(HostProbe, RailDeletedBetweenTicksIsDroppedAtTheNextTickAndFoundAgain) {
  test::TempDir dir;
  std::filesystem::copy(test::fixture("roots/gb10-finetune"), dir.path(),
                        std::filesystem::copy_options::recursive);
  const HostRoot root(dir.path());
  HostProbe probe{root};
  const HostReading before = probe.read();
  ASSERT_TRUE(before.spbm_gpu_microwatts.has_value());
  ASSERT_TRUE(before.spbm_sys_total_microwatts.has_value());
  // The gpu rail's file, wherever the fixture keeps it (the chip's directory or its device/).
  std::filesystem::path gpu_rail;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir.path() / "sys")) {
    const auto n = e.path().filename().string();
    if (n.starts_with("power") && n.ends_with("_label") && test::slurp(e.path()) == "gpu\n") {
      const auto stem = n.substr(0, n.size() - std::string("_label").size());
      for (const char* suffix : {"_input", "_average"}) {
        const auto p = e.path().parent_path() / (stem + suffix);
        if (std::filesystem::exists(p)) gpu_rail = p;
      }
    }
  }
  ASSERT_FALSE(gpu_rail.empty());
  const std::string saved = test::slurp(gpu_rail);
  std::filesystem::remove(gpu_rail);
  for (int tick = 0; tick < 3; ++tick) {
    const HostReading h = probe.read();
    EXPECT_FALSE(h.spbm_gpu_microwatts.has_value()) << tick;
    EXPECT_EQ(h.spbm_sys_total_microwatts, before.spbm_sys_total_microwatts) << tick;
    EXPECT_EQ(h.mem_available_bytes, before.mem_available_bytes) << tick;
  }
  test::write_text(gpu_rail, saved);
  std::optional<std::uint64_t> found;
  for (int i = 0; i < 8 && !found; ++i) found = probe.read().spbm_gpu_microwatts;  // back-off
  EXPECT_EQ(found, before.spbm_gpu_microwatts);
}

}  // namespace
}  // namespace sparkops::host
