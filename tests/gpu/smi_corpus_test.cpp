// Every nvidia-smi / NVML output in the shared corpus (copied to tests/fixtures/nvidia-smi/corpus,
// attribution in that folder's README) parses to the figures it shows; [N/A] is absent, never 0.

#include <ostream>

#include <gtest/gtest.h>

#include "base/text.hpp"
#include "gpu/smi_parse.hpp"
#include "gpu/throttle_reasons.hpp"
#include "support/test_support.hpp"

namespace sparkops::gpu {
namespace {

using namespace std::chrono_literals;

// The output that follows the command line starting with `command` (quoted as "$ nvidia-smi ..."
// or bare "nvidia-smi ..."), up to the next command line; or the
// whole file without its "# source/what" comment lines when `command` is empty.
std::string corpus_output(std::string_view file, std::string_view command = {}) {
  const std::string text =
      test::slurp(test::fixture(std::string("nvidia-smi/corpus/") + std::string(file)));
  std::string out;
  bool on = command.empty();
  for (std::string_view line : split_lines(text)) {
    if (line.starts_with("# ")) continue;
    const bool prompt = line.starts_with("$ ") || line.starts_with("nvidia-smi ");
    if (!command.empty() && prompt) {
      if (on) break;
      on = (line.starts_with("$ ") ? line.substr(2) : line).starts_with(command);
      continue;
    }
    if (on && !line.starts_with("[... truncated")) {
      out += line;
      out += '\n';
    }
  }
  return out;
}

// The field list of the "--query-gpu=" or "--query-compute-apps=" flag quoted in the file.
std::vector<std::string> quoted_fields(std::string_view file, std::string_view flag) {
  const std::string text =
      test::slurp(test::fixture(std::string("nvidia-smi/corpus/") + std::string(file)));
  const auto at = text.find(flag);
  EXPECT_NE(at, std::string::npos) << file;
  std::string_view rest = std::string_view(text).substr(at + flag.size());
  rest = rest.substr(0, rest.find(' '));
  std::vector<std::string> out;
  for (auto f : split(rest, ',')) out.emplace_back(f);
  return out;
}

TEST(SmiCorpus, QueryGpuMemoryNoheaderNounitsIsAbsent) {
  const char* file = "query-gpu-memory-csv-noheader-nounits.txt";
  auto recs =
      parse_smi_query_gpu(corpus_output(file, "nvidia-smi"), quoted_fields(file, "--query-gpu="));
  ASSERT_TRUE(recs) << recs.error().detail;
  ASSERT_EQ(recs->size(), 1U);
  EXPECT_EQ((*recs)[0].device.index, 0U);
  EXPECT_EQ((*recs)[0].device.name, "NVIDIA GB10");
  EXPECT_FALSE((*recs)[0].snapshot.memory.has_value());
}

TEST(SmiCorpus, QueryGpuMemoryWithHeaderIsAbsent) {
  const char* file = "query-gpu-memory-csv-with-header.txt";
  auto rows = parse_smi_csv(corpus_output(file, "nvidia-smi"), {});
  ASSERT_TRUE(rows) << rows.error().detail;
  ASSERT_EQ(rows->size(), 1U);
  ASSERT_NE((*rows)[0].find("memory.total"), nullptr);  // header unit "[MiB]" stripped
  EXPECT_FALSE((*rows)[0].find("memory.total")->has_value());
  EXPECT_FALSE((*rows)[0].find("memory.free")->has_value());
  auto recs = parse_smi_query_gpu(corpus_output(file, "nvidia-smi"), {});
  ASSERT_TRUE(recs);
  EXPECT_EQ((*recs)[0].device.name, "NVIDIA GB10");
  EXPECT_FALSE((*recs)[0].snapshot.memory.has_value());
}

TEST(SmiCorpus, QueryGpuMemoryFreeTotalUsedHeaderOnlyMarkers) {
  auto recs = parse_smi_query_gpu(corpus_output("query-gpu-memory-free-total-used-csv.txt"), {});
  ASSERT_TRUE(recs) << recs.error().detail;
  ASSERT_EQ(recs->size(), 1U);
  EXPECT_FALSE((*recs)[0].snapshot.memory.has_value());
}

TEST(SmiCorpus, QueryGpuMemoryUtilKeepsRealZero) {
  const char* file = "query-gpu-memory-util-and-compute-apps.txt";
  auto recs = parse_smi_query_gpu(corpus_output(file, "nvidia-smi --query-gpu"),
                                  quoted_fields(file, "--query-gpu="));
  ASSERT_TRUE(recs) << recs.error().detail;
  EXPECT_FALSE((*recs)[0].snapshot.memory.has_value());
  EXPECT_EQ((*recs)[0].snapshot.util_mem_percent, 0U);  // a printed 0 is a real 0
}

TEST(SmiCorpus, ComputeAppsGiveProcessMemory) {
  const char* file = "query-gpu-memory-util-and-compute-apps.txt";
  auto apps = parse_smi_compute_apps(corpus_output(file, "nvidia-smi --query-compute-apps"),
                                     quoted_fields(file, "--query-compute-apps="));
  ASSERT_TRUE(apps) << apps.error().detail;
  ASSERT_EQ(apps->size(), 1U);
  EXPECT_EQ((*apps)[0].gpu_uuid, "GPU-...");
  EXPECT_EQ((*apps)[0].process.pid, 114687U);
  EXPECT_EQ((*apps)[0].process.name, "/usr/local/bin/python");
  EXPECT_EQ((*apps)[0].process.used_bytes, 19135ULL * 1024 * 1024);
}

TEST(SmiCorpus, NameMemUtilTempNoheaderNounits) {
  const char* file = "query-gpu-name-mem-util-temp-noheader-nounits.txt";
  auto recs =
      parse_smi_query_gpu(corpus_output(file, "nvidia-smi"), quoted_fields(file, "--query-gpu="));
  ASSERT_TRUE(recs) << recs.error().detail;
  const auto& s = (*recs)[0].snapshot;
  EXPECT_EQ((*recs)[0].device.name, "NVIDIA GB10");
  EXPECT_FALSE(s.memory.has_value());
  EXPECT_EQ(s.util_gpu_percent, 0U);
  EXPECT_EQ(s.temp_millicelsius, 39'000);
}

TEST(SmiCorpus, CtypesFileCsvWithUnitsInCells) {
  const char* file = "nvml-ctypes-memoryinfo-not-supported-plus-meminfo.txt";
  auto recs = parse_smi_query_gpu(corpus_output(file, "nvidia-smi"), {});
  ASSERT_TRUE(recs) << recs.error().detail;
  const auto& s = (*recs)[0].snapshot;
  EXPECT_FALSE(s.memory.has_value());
  EXPECT_EQ(s.util_gpu_percent, 0U);
  EXPECT_EQ(s.power_microwatts, 11'170'000U);
  EXPECT_EQ(s.temp_millicelsius, 35'000);
}

struct TableCase {
  const char* file;
  const char* driver;
  std::int64_t temp_millicelsius;
  std::uint32_t pstate;
  std::uint64_t power_microwatts;
  std::uint32_t util;
  std::size_t processes;
};

// ctest names carry the parameter: print the file, not the struct's bytes (which hold pointers).
void PrintTo(const TableCase& c, std::ostream* os) {
  *os << c.file;
}

class SmiCorpusTable : public ::testing::TestWithParam<TableCase> {};

TEST_P(SmiCorpusTable, Gb10BlockParses) {
  const TableCase& c = GetParam();
  std::string text = corpus_output(c.file);
  // The llmfit file quotes two commands; keep only nvidia-smi's part.
  if (const auto at = text.find("Sat Feb 28"); at != std::string::npos) text = text.substr(at);
  auto table = parse_smi_table(text);
  ASSERT_TRUE(table) << table.error().detail;
  EXPECT_EQ(table->driver_version, c.driver);
  EXPECT_EQ(table->cuda_version, "13.0");
  ASSERT_EQ(table->gpus.size(), 1U);
  const auto& g = table->gpus[0];
  EXPECT_EQ(g.device.index, 0U);
  EXPECT_EQ(g.device.name, "NVIDIA GB10");
  EXPECT_EQ(g.device.pci_bus_id, "0000000F:01:00.0");
  EXPECT_EQ(g.snapshot.temp_millicelsius, c.temp_millicelsius);
  EXPECT_EQ(g.snapshot.pstate, c.pstate);
  EXPECT_EQ(g.snapshot.power_microwatts, c.power_microwatts);
  EXPECT_FALSE(g.snapshot.power_limit_microwatts.has_value());  // "/  N/A"
  EXPECT_FALSE(g.snapshot.memory.has_value());                  // "Not Supported"
  EXPECT_EQ(g.snapshot.util_gpu_percent, c.util);
  EXPECT_EQ(table->processes.size(), c.processes);
}

INSTANTIATE_TEST_SUITE_P(
    Corpus, SmiCorpusTable,
    ::testing::Values(TableCase{"nvidia-smi-default-idle-580.126.09.txt", "580.126.09", 36'000, 8,
                                3'000'000, 0, 0},
                      TableCase{"nvidia-smi-default-idle-580.95.05-k8s.txt", "580.95.05", 40'000, 8,
                                4'000'000, 0, 0},
                      TableCase{"nvidia-smi-default-idle-desktop-580.95.05.txt", "580.95.05",
                                45'000, 0, 11'000'000, 10, 3},
                      TableCase{"nvidia-smi-default-plus-llmfit-ram-580.126.09.txt", "580.126.09",
                                37'000, 0, 11'000'000, 0, 0}));

TEST(SmiCorpus, DesktopTableProcessesKeepTheirMemory) {
  auto table = parse_smi_table(corpus_output("nvidia-smi-default-idle-desktop-580.95.05.txt"));
  ASSERT_TRUE(table);
  ASSERT_EQ(table->processes.size(), 3U);
  EXPECT_EQ(table->processes[0].pid, 4174U);
  EXPECT_EQ(table->processes[0].type, "G");
  EXPECT_EQ(table->processes[0].name, "/usr/lib/xorg/Xorg");
  EXPECT_EQ(table->processes[0].used_bytes, 84ULL * 1024 * 1024);
  EXPECT_EQ(table->processes[1].name, "/usr/bin/gnome-shell");
  EXPECT_EQ(table->processes[2].name, ".../7182/usr/lib/firefox/firefox");
  EXPECT_EQ(table->processes[2].used_bytes, 273ULL * 1024 * 1024);
}

TEST(SmiCorpus, QPerformanceCountersShowThrottlingTheBitsMiss) {
  auto q = parse_smi_q(corpus_output("nvidia-smi-q-performance-counters-2026-01-04.txt"));
  ASSERT_TRUE(q) << q.error().detail;
  EXPECT_EQ(q->driver_version, "580.95.05");
  EXPECT_EQ(q->cuda_version, "13.0");
  ASSERT_EQ(q->gpus.size(), 1U);
  const auto& g = q->gpus[0];
  EXPECT_EQ(g.record.device.pci_bus_id, "0000000F:01:00.0");
  const auto& s = g.record.snapshot;
  EXPECT_EQ(s.pstate, 0U);
  EXPECT_EQ(s.clocks_event_reasons, 0U);  // every reason "Not Active"
  EXPECT_EQ(s.counters.sw_power_cap, 165'687'000ns);
  EXPECT_EQ(s.counters.sync_boost, 0ns);
  EXPECT_EQ(s.counters.sw_thermal, 903'158'000ns);
  EXPECT_EQ(s.counters.hw_thermal, 0ns);
  EXPECT_EQ(s.counters.hw_power_brake, 0ns);
  EXPECT_EQ(s.temp_millicelsius, 81'000);
  EXPECT_EQ(s.margin_temp_millicelsius, 13'000);
  EXPECT_EQ(g.shutdown_margin_millicelsius, -5'000);
  EXPECT_FALSE(g.slowdown_margin_millicelsius.has_value());  // cut in the stored copy
}

TEST(SmiCorpus, QFbMemoryUsageNaIsAbsent) {
  auto q = parse_smi_q(corpus_output("nvidia-smi-q-fb-memory-usage-na.txt"));
  ASSERT_TRUE(q) << q.error().detail;
  ASSERT_EQ(q->gpus.size(), 1U);
  EXPECT_TRUE(q->gpus[0].fb_memory_na);
  EXPECT_FALSE(q->gpus[0].record.snapshot.memory.has_value());
}

}  // namespace
}  // namespace sparkops::gpu

namespace sparkops::gpu {
namespace {

// Every file of ../shared/corpus/nvidia-smi is either parsed above (copied into the fixtures) or
// listed in docs/gpu.md as covered elsewhere. Skipped when the shared corpus is not beside the
// checkout.
TEST(SmiCorpus, EveryCorpusFileIsCoveredOrListed) {
  const auto dir = test::shared_corpus("nvidia-smi");
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << "no shared corpus at " << dir;
  const std::string doc =
      test::slurp(std::filesystem::path(SPARKOPS_SOURCE_DIR) / "docs" / "gpu.md");
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    const bool copied = std::filesystem::exists(test::fixture("nvidia-smi/corpus/" + name));
    const std::string stem = entry.path().stem().string();
    EXPECT_TRUE(copied || doc.find(stem) != std::string::npos) << name;
    if (copied) {
      EXPECT_EQ(test::slurp(entry.path()), test::slurp(test::fixture("nvidia-smi/corpus/" + name)))
          << name << ": fixture copy differs from the corpus";
    }
  }
}

}  // namespace
}  // namespace sparkops::gpu
