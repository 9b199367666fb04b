#include "exporter/metrics_builder.hpp"

#include <set>

#include <gtest/gtest.h>

#include "status_fixture.hpp"
#include "support/test_support.hpp"

namespace sparkops::exporter {
namespace {

std::set<std::string> family_names(const std::vector<MetricFamily>& families) {
  std::set<std::string> out;
  for (const auto& f : families) out.insert(f.name);
  return out;
}

const MetricFamily* find(const std::vector<MetricFamily>& families, std::string_view name) {
  for (const auto& f : families) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

EventTotals some_events() {
  EventTotals e;
  e.throttle = std::vector<EventCount>{{0, "sw_thermal", 3}, {0, "sw_power_cap", 0}};
  e.slowdown = std::vector<EventCount>{{0, "low_clock", 1}};
  e.contention = 2;
  return e;
}

TEST(MetricsBuilder, FullReportMatchesGolden) {
  MetricsOptions options;
  options.collect_duration_seconds = 0.0125;
  options.collect_interval_seconds = 5;
  options.platform_ceiling_watts = 100;
  test::expect_golden("golden/exporter/full.prom",
                      render_metrics(test::full_status_report(), some_events(), options));
}

TEST(MetricsBuilder, BareReportMatchesGolden) {
  test::expect_golden("golden/exporter/bare.prom",
                      render_metrics(test::bare_status_report(), {}, {}));
}

TEST(MetricsBuilder, FullReportEmitsEveryCatalogueFamily) {
  const auto families = build_metric_families(test::full_status_report(), some_events(),
                                              {.collect_duration_seconds = 0.01,
                                               .collect_interval_seconds = 5,
                                               .platform_ceiling_watts = 100});
  const auto emitted = family_names(families);
  for (const auto& def : metric_catalogue()) {
    EXPECT_TRUE(emitted.count(std::string(def.name)))
        << def.name << " not emitted for a full report";
  }
}

TEST(MetricsBuilder, AbsentFiguresAreOmittedNotZero) {
  const auto families = build_metric_families(test::bare_status_report(), {}, {});
  const auto emitted = family_names(families);
  for (const char* absent :
       {"sparkops_gpu_temperature_celsius", "sparkops_gpu_power_watts", "sparkops_gpu_info",
        "sparkops_memory_pressure_avg10_ratio", "sparkops_host_hottest_sensor_celsius",
        "sparkops_spbm_rail_power_watts", "sparkops_workloads", "sparkops_workload_actual_bytes",
        "sparkops_throttle_events_total", "sparkops_contention_events_total",
        "sparkops_cgroup_memory_max_bytes", "sparkops_gpu_process_memory_bytes"}) {
    EXPECT_FALSE(emitted.count(absent)) << absent;
  }
  EXPECT_TRUE(emitted.count("sparkops_pool_available_bytes"));
  EXPECT_TRUE(emitted.count("sparkops_gpu_source_info"));
}

TEST(MetricsBuilder, Gb10WithoutMemoryInfoOmitsGpuMemorySeries) {
  auto report = test::full_status_report();
  report.gpu.snapshots[0].memory.reset();
  report.gpu.snapshots[0].power_limit_microwatts.reset();
  const auto emitted = family_names(build_metric_families(report, {}, {}));
  EXPECT_FALSE(emitted.count("sparkops_gpu_memory_total_bytes"));
  EXPECT_FALSE(emitted.count("sparkops_gpu_power_limit_watts"));
  EXPECT_TRUE(emitted.count("sparkops_gpu_temperature_celsius"));
}

TEST(MetricsBuilder, UncappedWorkloadHasNoClaimSeries) {
  const auto families = build_metric_families(test::full_status_report(), {}, {});
  const auto* claim = find(families, "sparkops_workload_claim_bytes");
  ASSERT_NE(claim, nullptr);
  ASSERT_EQ(claim->samples.size(), 1U);
  EXPECT_EQ(claim->samples[0].labels[1].value, "3100");
}

TEST(MetricsBuilder, WorkloadSeriesAreCappedLargestFirst) {
  auto report = test::full_status_report();
  MetricsOptions options;
  options.max_workload_series = 1;
  const auto families = build_metric_families(report, {}, options);
  const auto* actual = find(families, "sparkops_workload_actual_bytes");
  ASSERT_NE(actual, nullptr);
  ASSERT_EQ(actual->samples.size(), 1U);
  EXPECT_EQ(actual->samples[0].labels[1].value, "4242");
  const auto* unexported = find(families, "sparkops_workloads_unexported");
  ASSERT_NE(unexported, nullptr);
  EXPECT_EQ(unexported->samples[0].value, 2);
  const auto* per_kind = find(families, "sparkops_workloads");
  ASSERT_NE(per_kind, nullptr);
  EXPECT_EQ(per_kind->samples.size(), 3U);  // counts stay complete
}

TEST(MetricsBuilder, UnitsAreConvertedToBaseUnits) {
  const auto families = build_metric_families(test::full_status_report(), {}, {});
  EXPECT_DOUBLE_EQ(find(families, "sparkops_gpu_temperature_celsius")->samples[0].value, 83.0);
  EXPECT_DOUBLE_EQ(find(families, "sparkops_gpu_power_watts")->samples[0].value, 97.45);
  EXPECT_DOUBLE_EQ(find(families, "sparkops_gpu_sm_clock_hertz")->samples[0].value, 2405e6);
  EXPECT_DOUBLE_EQ(find(families, "sparkops_gpu_utilization_ratio")->samples[0].value, 0.96);
  EXPECT_DOUBLE_EQ(find(families, "sparkops_gpu_energy_joules_total")->samples[0].value,
                   5234567.890123);
  const auto* throttle = find(families, "sparkops_gpu_throttle_seconds_total");
  ASSERT_NE(throttle, nullptr);
  bool saw_sw_thermal = false;
  for (const auto& s : throttle->samples) {
    if (s.labels[1].value == "sw_thermal") {
      saw_sw_thermal = true;
      EXPECT_DOUBLE_EQ(s.value, 173.0);
    }
  }
  EXPECT_TRUE(saw_sw_thermal);
}

TEST(MetricsBuilder, EveryNameAndLabelIsValidAndCountersEndInTotal) {
  for (const auto& def : metric_catalogue()) {
    EXPECT_TRUE(is_valid_metric_name(def.name)) << def.name;
    EXPECT_EQ(def.name.substr(0, 9), "sparkops_") << def.name;
    const bool ends_total = def.name.size() > 6 && def.name.substr(def.name.size() - 6) == "_total";
    EXPECT_EQ(def.type == MetricType::counter, ends_total) << def.name;
  }
  for (const auto& f : build_metric_families(test::full_status_report(), some_events(), {})) {
    for (const auto& s : f.samples) {
      for (const auto& l : s.labels)
        EXPECT_TRUE(is_valid_label_name(l.name)) << f.name << " " << l.name;
    }
  }
}

TEST(MetricsBuilder, LabelNamesMatchTheCatalogue) {
  for (const auto& f : build_metric_families(test::full_status_report(), some_events(), {})) {
    std::string names;
    for (const auto& l : f.samples.front().labels) names += (names.empty() ? "" : ",") + l.name;
    EXPECT_EQ(names, metric_def(f.name).labels) << f.name;
  }
}

}  // namespace
}  // namespace sparkops::exporter
