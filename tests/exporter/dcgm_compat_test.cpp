// --dcgm-compat: names and types match dcgm-exporter's (fixture: its default-counters.csv at tag
// 4.5.3-4.8.2), labels come in its order, values are in DCGM's units, framebuffer fields follow
// the documented pool semantics on a GB10, and promtool parses the result.

#include "exporter/dcgm_compat.hpp"

#include <cstdlib>
#include <map>

#include <gtest/gtest.h>

#include "base/text.hpp"
#include "exporter/metrics_builder.hpp"
#include "status_fixture.hpp"
#include "support/test_support.hpp"

namespace sparkops::exporter {
namespace {

struct FixtureField {
  std::string type;
  std::string listed;
};

std::map<std::string, FixtureField> dcgm_exporter_fields() {
  const std::string text =
      test::slurp(std::filesystem::path(SPARKOPS_SOURCE_DIR) / "tests" / "fixtures" / "dcgm" /
                  "dcgm-exporter-4.5.3-4.8.2-fields.csv");
  std::map<std::string, FixtureField> out;
  for (const auto line : split_lines(text)) {
    if (line.empty() || line.front() == '#') continue;
    const auto cells = split(line, ',');
    if (cells.size() != 3) continue;
    out[std::string(cells[0])] = {std::string(cells[1]), std::string(cells[2])};
  }
  return out;
}

std::vector<MetricFamily> dcgm_of(const status::StatusReport& report) {
  MetricsOptions options;
  options.dcgm_compat = DcgmCompat::on;
  std::vector<MetricFamily> out;
  for (auto& f : build_metric_families(report, {}, options)) {
    if (f.name.rfind("DCGM_", 0) == 0) out.push_back(std::move(f));
  }
  return out;
}

const MetricFamily& family(const std::vector<MetricFamily>& families, std::string_view name) {
  for (const auto& f : families) {
    if (f.name == name) return f;
  }
  throw std::out_of_range(std::string(name) + " not emitted");
}

double value(const std::vector<MetricFamily>& families, std::string_view name) {
  const auto& f = family(families, name);
  EXPECT_EQ(f.samples.size(), 1U) << name;
  return f.samples.front().value;
}

TEST(DcgmCompat, FixtureListsTheNamesUsed) {
  const auto fields = dcgm_exporter_fields();
  EXPECT_EQ(fields.size(), dcgm_catalogue().size());
  for (const auto& def : dcgm_catalogue()) {
    const auto it = fields.find(std::string(def.name));
    ASSERT_NE(it, fields.end()) << def.name << " is not a dcgm-exporter field";
    EXPECT_EQ(it->second.type, metric_type_name(def.type)) << def.name;
  }
}

TEST(DcgmCompat, FullReportEmitsEveryFieldWithDcgmExporterType) {
  const auto fields = dcgm_exporter_fields();
  const auto families = dcgm_of(test::full_status_report());
  EXPECT_EQ(families.size(), fields.size());
  for (const auto& f : families) {
    const auto it = fields.find(f.name);
    ASSERT_NE(it, fields.end()) << f.name;
    EXPECT_EQ(metric_type_name(f.type), it->second.type) << f.name;
  }
}

TEST(DcgmCompat, OffByDefault) {
  for (const auto& f : build_metric_families(test::full_status_report(), {}, {})) {
    EXPECT_NE(f.name.rfind("DCGM_", 0), 0U) << f.name;
  }
}

TEST(DcgmCompat, LabelsFollowDcgmExporterOrderAndValues) {
  const auto families = dcgm_of(test::full_status_report());
  const auto& labels = family(families, "DCGM_FI_DEV_GPU_TEMP").samples.front().labels;
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"gpu", "0"},
      {"UUID", "GPU-5f2b3c1e-0000-1111-2222-333344445555"},
      {"pci_bus_id", "0000000F:01:00.0"},
      {"device", "nvidia0"},
      {"modelName", "NVIDIA GB10"},
      {"Hostname", "spark-01"},
      {"DCGM_FI_DRIVER_VERSION", "580.95.05"}};
  ASSERT_EQ(labels.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(labels[i].name, expected[i].first);
    EXPECT_EQ(labels[i].value, expected[i].second);
  }
}

TEST(DcgmCompat, UnknownHostnameAndDriverLeaveTheirLabelsOut) {
  auto report = test::full_status_report();
  report.system.hostname.reset();
  report.gpu.driver_version.reset();
  const auto families = dcgm_of(report);
  const auto& labels = family(families, "DCGM_FI_DEV_SM_CLOCK").samples.front().labels;
  ASSERT_EQ(labels.size(), 5U);
  EXPECT_EQ(labels.back().name, "modelName");
}

TEST(DcgmCompat, ValuesAreInDcgmUnits) {
  const auto f = dcgm_of(test::full_status_report());
  EXPECT_EQ(value(f, "DCGM_FI_DEV_SM_CLOCK"), 2405);  // MHz
  EXPECT_EQ(value(f, "DCGM_FI_DEV_MEM_CLOCK"), 4266);
  EXPECT_EQ(value(f, "DCGM_FI_DEV_GPU_TEMP"), 83);                          // C
  EXPECT_EQ(value(f, "DCGM_FI_DEV_POWER_USAGE"), 97.45);                    // W
  EXPECT_EQ(value(f, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"), 5234567890);  // mJ
  EXPECT_EQ(value(f, "DCGM_FI_DEV_GPU_UTIL"), 96);                          // %
  EXPECT_EQ(value(f, "DCGM_FI_DEV_MEM_COPY_UTIL"), 41);
  EXPECT_EQ(value(f, "DCGM_FI_DEV_POWER_VIOLATION"), 12.5e9);   // ns
  EXPECT_EQ(value(f, "DCGM_FI_DEV_THERMAL_VIOLATION"), 173e9);  // sw 173 s + hw 0
  EXPECT_EQ(value(f, "DCGM_FI_DEV_SYNC_BOOST_VIOLATION"), 0);
}

TEST(DcgmCompat, DiscreteGpuFramebufferComesFromTheDevice) {
  // Fixture device memory: total 24 GiB, free 4 GiB, used 20 GiB.
  const auto f = dcgm_of(test::full_status_report());
  EXPECT_EQ(value(f, "DCGM_FI_DEV_FB_FREE"), 4096);
  EXPECT_EQ(value(f, "DCGM_FI_DEV_FB_USED"), 20480);
  EXPECT_EQ(value(f, "DCGM_FI_DEV_FB_RESERVED"), 0);
}

TEST(DcgmCompat, Gb10FramebufferDescribesThePool) {
  auto report = test::full_status_report();
  report.gpu.snapshots[0].memory.reset();  // NVML NOT_SUPPORTED on GB10
  report.pool->hugepages_reserved_bytes = 2ULL << 30;
  const auto f = dcgm_of(report);
  // Whole MiB, rounded down: available 121412186112 B is 115787.99 MiB.
  EXPECT_EQ(value(f, "DCGM_FI_DEV_FB_FREE"), 115787);
  EXPECT_EQ(value(f, "DCGM_FI_DEV_FB_RESERVED"), 2048);
  EXPECT_EQ(value(f, "DCGM_FI_DEV_FB_USED"),
            static_cast<double>((128526278656ULL - 121412186112ULL - (2ULL << 30)) >> 20));
}

TEST(DcgmCompat, SwapCountedAsAvailableNeverMakesFreeExceedTotal) {
  auto report = test::full_status_report();
  report.gpu.snapshots[0].memory.reset();
  report.pool->available_bytes = report.pool->total_bytes + (8ULL << 30);
  const auto f = dcgm_of(report);
  EXPECT_EQ(value(f, "DCGM_FI_DEV_FB_FREE"), static_cast<double>(128526278656ULL >> 20));
  EXPECT_EQ(value(f, "DCGM_FI_DEV_FB_USED"), 0);
}

TEST(DcgmCompat, SeveralUnifiedGpusDoNotSplitThePool) {
  auto report = test::full_status_report();
  report.gpu.snapshots[0].memory.reset();
  auto second = report.gpu.snapshots[0];
  second.index = 1;
  report.gpu.snapshots.push_back(second);
  const auto f = dcgm_of(report);
  for (const auto& fam : f) EXPECT_EQ(fam.name.find("_FB_"), std::string::npos) << fam.name;
  EXPECT_EQ(family(f, "DCGM_FI_DEV_GPU_TEMP").samples.size(), 2U);
}

TEST(DcgmCompat, NoGpuNoDcgmSeries) {
  EXPECT_TRUE(dcgm_of(test::bare_status_report()).empty());
}

// promtool parses the whole exposition; its only lint findings are the ones dcgm-exporter's own
// names carry (upper-case label names, counters without _total), never a sparkops_ series.
TEST(DcgmCompat, PromtoolCheckMetricsAcceptsTheExposition) {
  const char* skip = std::getenv("SPARKOPS_SKIP_PROMETHEUS");
  if (skip != nullptr && std::string_view(skip) == "1") GTEST_SKIP();
  ASSERT_TRUE(std::filesystem::exists("/usr/bin/promtool")) << "run tools/install-deps.sh --test";
  MetricsOptions options;
  options.dcgm_compat = DcgmCompat::on;
  const std::string text = render_metrics(test::full_status_report(), {}, options);
  const auto r = test::run_process({"/usr/bin/promtool", "check", "metrics"}, {}, text);
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 3) << "exit " << r.exit_code << ": " << r.err;
  const std::string findings = r.out + r.err;
  for (const auto line : split_lines(findings)) {
    if (trim(line).empty()) continue;
    EXPECT_TRUE(starts_with(line, "DCGM_FI_")) << line;
    const bool known =
        line.find("label names should be written in 'snake_case' not 'camelCase'") !=
            std::string_view::npos ||
        line.find("counter metrics should have \"_total\" suffix") != std::string_view::npos;
    EXPECT_TRUE(known) << line;
  }
}

// docs/metrics.md lists exactly the DCGM names exported, with their types.
TEST(DcgmCompat, DocsListEveryDcgmFieldWithItsType) {
  const std::string text =
      test::slurp(std::filesystem::path(SPARKOPS_SOURCE_DIR) / "docs" / "metrics.md");
  std::map<std::string, std::string> documented;
  for (const auto line : split_lines(text)) {
    const auto cells = split(line, '|');
    if (cells.size() < 5 || !starts_with(trim(cells[1]), "`DCGM_")) continue;
    const auto name = trim(cells[1]);
    documented[std::string(name.substr(1, name.size() - 2))] = std::string(trim(cells[2]));
  }
  EXPECT_EQ(documented.size(), dcgm_catalogue().size());
  for (const auto& def : dcgm_catalogue()) {
    const auto it = documented.find(std::string(def.name));
    ASSERT_NE(it, documented.end()) << def.name << " missing from docs/metrics.md";
    EXPECT_EQ(it->second, metric_type_name(def.type)) << def.name;
  }
}

}  // namespace
}  // namespace sparkops::exporter
