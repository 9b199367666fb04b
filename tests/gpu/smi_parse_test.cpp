#include "gpu/smi_parse.hpp"

#include <gtest/gtest.h>

#include "gpu/throttle_reasons.hpp"

namespace sparkops::gpu {
namespace {

TEST(SmiCell, EveryMarkerIsUnavailable) {
  for (const char* cell : {"[N/A]", "N/A", "[Not Supported]", "Not Supported", "[Unknown Error]",
                           "[Insufficient Permissions]", "[GPU is lost]", "", "  "}) {
    EXPECT_TRUE(smi_is_unavailable(cell)) << cell;
    EXPECT_FALSE(smi_number(cell).has_value()) << cell;
  }
  EXPECT_FALSE(smi_is_unavailable("0"));
}

TEST(SmiCell, NumbersWithAndWithoutUnits) {
  EXPECT_EQ(smi_number("11.23 W"), 11.23);
  EXPECT_EQ(smi_number("0 %"), 0.0);
  EXPECT_EQ(smi_number(" 35"), 35.0);
  EXPECT_EQ(smi_number("19135 MiB"), 19135.0);
  EXPECT_EQ(smi_number("84MiB"), 84.0);
  EXPECT_FALSE(smi_number("P0").has_value());
  EXPECT_FALSE(smi_number("12 34").has_value());
}

TEST(SmiCsv, NoheaderRowsUseTheAskedFields) {
  auto rows = parse_smi_csv("0, NVIDIA GB10, [N/A]\n", {"index", "name", "memory.total"});
  ASSERT_TRUE(rows);
  ASSERT_EQ(rows->size(), 1U);
  EXPECT_EQ(*(*rows)[0].find("name"), "NVIDIA GB10");
  EXPECT_FALSE((*rows)[0].find("memory.total")->has_value());
  EXPECT_EQ((*rows)[0].find("pstate"), nullptr);
}

TEST(SmiCsv, CellCountMismatchIsMalformed) {
  auto rows = parse_smi_csv("0, NVIDIA GB10\n", {"index", "name", "memory.total"});
  ASSERT_FALSE(rows);
  EXPECT_EQ(rows.error().code, Errc::malformed);
}

TEST(SmiCsv, WholeQueryNaGivesADeviceWithNoFigures) {
  auto recs = parse_smi_query_gpu("[N/A], [N/A]\n", {"memory.used", "memory.total"});
  ASSERT_TRUE(recs);
  ASSERT_EQ(recs->size(), 1U);
  EXPECT_FALSE((*recs)[0].snapshot.memory.has_value());
  EXPECT_FALSE((*recs)[0].snapshot.temp_millicelsius.has_value());
}

TEST(SmiCsv, HeaderWithUnitsInCells) {
  // The skill's sampler format: header, then rows with units.
  auto recs = parse_smi_query_gpu(
      "index, temperature.gpu, power.draw [W], utilization.gpu [%], pstate, "
      "clocks_throttle_reasons.active\n"
      "0, 45, 11.23 W, 0 %, P8, 0x0000000000000024\n",
      {});
  ASSERT_TRUE(recs) << recs.error().detail;
  const auto& s = (*recs)[0].snapshot;
  EXPECT_EQ(s.temp_millicelsius, 45'000);
  EXPECT_EQ(s.power_microwatts, 11'230'000U);
  EXPECT_EQ(s.util_gpu_percent, 0U);
  EXPECT_EQ(s.pstate, 8U);
  EXPECT_EQ(s.clocks_event_reasons, kReasonSwPowerCap | kReasonSwThermal);
}

TEST(SmiCsv, DiscreteMemoryInMiB) {
  auto recs =
      parse_smi_query_gpu("143771, 604, 142645\n", {"memory.total", "memory.used", "memory.free"});
  ASSERT_TRUE(recs);
  ASSERT_TRUE((*recs)[0].snapshot.memory.has_value());
  EXPECT_EQ((*recs)[0].snapshot.memory->total_bytes, 143771ULL << 20);
  EXPECT_EQ((*recs)[0].snapshot.memory->used_bytes, 604ULL << 20);
}

TEST(SmiCsv, BadIndexIsMalformed) {
  auto recs = parse_smi_query_gpu("x\n", {"index"});
  ASSERT_FALSE(recs);
  EXPECT_EQ(recs.error().code, Errc::malformed);
}

TEST(SmiComputeApps, MissingPidIsMalformed) {
  auto apps = parse_smi_compute_apps("python, 12\n", {"process_name", "used_memory"});
  ASSERT_FALSE(apps);
}

TEST(SmiComputeApps, UnknownMemoryIsAbsent) {
  auto apps = parse_smi_compute_apps("GPU-1, 42, python, [N/A]\n",
                                     {"gpu_uuid", "pid", "process_name", "used_memory"});
  ASSERT_TRUE(apps);
  EXPECT_FALSE((*apps)[0].process.used_bytes.has_value());
}

TEST(SmiComputeApps, HeaderFormNamesUsedGpuMemory) {
  // `nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv` prints its header
  // with the column renamed.
  auto apps = parse_smi_compute_apps(
      "pid, process_name, used_gpu_memory [MiB]\n114687, python, 19135 MiB\n",
      {"pid", "process_name", "used_memory"});
  ASSERT_TRUE(apps) << apps.error().detail;
  ASSERT_EQ(apps->size(), 1u);
  EXPECT_EQ((*apps)[0].process.pid, 114687u);
  EXPECT_EQ((*apps)[0].process.used_bytes, 19135ULL << 20);
}

TEST(SmiTable, DiscreteGpuBlockWithMemoryAndCap) {
  const char* text =
      "| NVIDIA-SMI 570.172.08             Driver Version: 570.172.08     CUDA Version: 12.8     "
      "|\n"
      "|   0  NVIDIA H200                    On  |   00000000:19:00.0 Off |                    0 "
      "|\n"
      "| N/A   34C    P0             76W /  700W |     604MiB / 143771MiB |      0%      Default "
      "|\n";
  auto table = parse_smi_table(text);
  ASSERT_TRUE(table) << table.error().detail;
  const auto& s = table->gpus[0].snapshot;
  EXPECT_EQ(table->gpus[0].device.name, "NVIDIA H200");
  EXPECT_EQ(s.power_limit_microwatts, 700'000'000U);
  ASSERT_TRUE(s.memory.has_value());
  EXPECT_EQ(s.memory->used_bytes, 604ULL << 20);
  EXPECT_EQ(s.memory->free_bytes, (143771ULL - 604ULL) << 20);
}

TEST(SmiTable, NoGpuBlockIsMalformed) {
  EXPECT_FALSE(parse_smi_table("No devices were found\n"));
}

TEST(SmiQ, ActiveReasonsSetTheirBits) {
  const char* text =
      "GPU 00000000:19:00.0\n"
      "    Clocks Event Reasons\n"
      "        Idle                              : Not Active\n"
      "        SW Power Cap                      : Active\n"
      "        HW Slowdown                       : Not Active\n"
      "            HW Thermal Slowdown           : Active\n"
      "        SW Thermal Slowdown               : Active\n"
      "    FB Memory Usage\n"
      "        Total                             : 143771 MiB\n"
      "        Reserved                          : 522 MiB\n"
      "        Used                              : 604 MiB\n"
      "        Free                              : 142645 MiB\n";
  auto q = parse_smi_q(text);
  ASSERT_TRUE(q) << q.error().detail;
  const auto& s = q->gpus[0].record.snapshot;
  EXPECT_EQ(s.clocks_event_reasons, kReasonSwPowerCap | kReasonHwThermal | kReasonSwThermal);
  EXPECT_FALSE(q->gpus[0].fb_memory_na);
  ASSERT_TRUE(s.memory.has_value());
  EXPECT_EQ(s.memory->total_bytes, 143771ULL << 20);
}

TEST(SmiQ, OlderThrottleReasonsSectionName) {
  auto q =
      parse_smi_q("GPU 00000000:19:00.0\n    Clocks Throttle Reasons\n        Idle : Active\n");
  ASSERT_TRUE(q);
  EXPECT_EQ(q->gpus[0].record.snapshot.clocks_event_reasons, kReasonGpuIdle);
}

TEST(SmiQ, TwoGpusAreSeparate) {
  auto q = parse_smi_q(
      "GPU 00000000:19:00.0\n    Performance State : P0\n"
      "GPU 00000000:2A:00.0\n    Performance State : P8\n");
  ASSERT_TRUE(q);
  ASSERT_EQ(q->gpus.size(), 2U);
  EXPECT_EQ(q->gpus[1].record.device.index, 1U);
  EXPECT_EQ(q->gpus[1].record.snapshot.pstate, 8U);
}

TEST(SmiQ, UnrelatedTextIsMalformed) {
  EXPECT_FALSE(parse_smi_q("hello\nworld\n"));
}

}  // namespace
}  // namespace sparkops::gpu
