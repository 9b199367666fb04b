// deploy/: the Grafana dashboard only queries exported metrics, and the units and scrape config
// carry what their headers promise.

#include <cstdlib>
#include <regex>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "exporter/metric_catalogue.hpp"
#include "support/test_support.hpp"

namespace sparkops::exporter {
namespace {

std::filesystem::path deploy(std::string_view rel) {
  return std::filesystem::path(SPARKOPS_SOURCE_DIR) / "deploy" / rel;
}

void collect_exprs(const nlohmann::json& node, std::vector<std::string>& out) {
  if (node.is_object()) {
    for (const auto& [key, value] : node.items()) {
      if (key == "expr" && value.is_string())
        out.push_back(value.get<std::string>());
      else if (key == "query" && value.is_object() && value.contains("query")) {
        out.push_back(value["query"].get<std::string>());
      } else {
        collect_exprs(value, out);
      }
    }
  } else if (node.is_array()) {
    for (const auto& v : node) collect_exprs(v, out);
  }
}

std::set<std::string> matches(const std::string& text, const std::regex& re, int group = 0) {
  std::set<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator();
       ++it) {
    out.insert((*it)[group].str());
  }
  return out;
}

nlohmann::json dashboard() {
  return nlohmann::json::parse(test::slurp(deploy("grafana/sparkops-dashboard.json")));
}

std::string rules_text() {
  return test::slurp(deploy("prometheus/sparkops-rules.yml"));
}

// Every expression names a series that exists: a catalogue metric, a recording rule of
// sparkops-rules.yml, or Prometheus' ALERTS restricted to alerts that file defines.
TEST(GrafanaDashboard, EveryExpressionNamesAnExportedMetricOrARule) {
  std::set<std::string> exported;
  for (const auto& def : metric_catalogue()) exported.insert(std::string(def.name));
  const std::string rules = rules_text();
  const auto recorded = matches(rules, std::regex(R"(- record: (sparkops:[a-z0-9_:]+))"), 1);
  const auto alerts = matches(rules, std::regex(R"(- alert: (\w+))"), 1);
  ASSERT_FALSE(recorded.empty());
  std::vector<std::string> exprs;
  collect_exprs(dashboard(), exprs);
  ASSERT_GT(exprs.size(), 20U);
  const std::regex metric(R"(\bsparkops_[a-z0-9_]+)");
  const std::regex recording(R"(\bsparkops:[a-z0-9_:]+)");
  const std::regex alertname(R"re(alertname=~"([^"]+)")re");
  for (const auto& e : exprs) {
    const auto metrics = matches(e, metric);
    const auto records = matches(e, recording);
    const bool uses_alerts = e.find("ALERTS{") != std::string::npos;
    EXPECT_TRUE(!metrics.empty() || !records.empty() || uses_alerts)
        << "expression names no sparkops series: " << e;
    for (const auto& m : metrics) EXPECT_TRUE(exported.count(m)) << m << " in \"" << e << "\"";
    for (const auto& r : records) {
      EXPECT_TRUE(recorded.count(r)) << r << " in \"" << e << "\" is not recorded by the rules";
    }
    if (uses_alerts) {
      const auto patterns = matches(e, alertname, 1);
      ASSERT_EQ(patterns.size(), 1U) << "ALERTS without an alertname=~ filter: " << e;
      const std::regex re(*patterns.begin());
      for (const auto& a : alerts) {
        EXPECT_TRUE(std::regex_match(a, re)) << a << " is not shown by \"" << e << "\"";
      }
    }
  }
}

// promtool parses every expression (each becomes a recording rule with $instance replaced).
TEST(GrafanaDashboard, PromtoolParsesEveryExpression) {
  const char* skip = std::getenv("SPARKOPS_SKIP_PROMETHEUS");
  if (skip != nullptr && std::string_view(skip) == "1") GTEST_SKIP();
  ASSERT_TRUE(std::filesystem::exists("/usr/bin/promtool")) << "run tools/install-deps.sh --test";
  std::vector<std::string> exprs;
  collect_exprs(dashboard(), exprs);
  std::string file = "groups:\n  - name: dashboard\n    rules:\n";
  for (std::size_t i = 0; i < exprs.size(); ++i) {
    std::string e = std::regex_replace(exprs[i], std::regex(R"(\$instance)"), ".*");
    if (e.find("label_values(") == 0) continue;  // a Grafana variable query, not PromQL
    file += "      - record: dashboard:expr_" + std::to_string(i) +
            "\n        expr: " + nlohmann::json(e).dump() + "\n";
  }
  test::TempDir dir;
  test::write_text(dir / "dashboard-rules.yml", file);
  const auto r = test::run_process(
      {"/usr/bin/promtool", "check", "rules", (dir / "dashboard-rules.yml").string()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err << file;
}

// The fleet view: one table row per Spark (every query aggregated to `instance`, instant, merged),
// with budget, temperature, power against the ceiling, throttle state and heavy workloads.
TEST(GrafanaDashboard, FleetViewHasOneRowPerSpark) {
  const auto doc = dashboard();
  const nlohmann::json* fleet = nullptr;
  for (const auto& p : doc["panels"]) {
    if (p["title"].get<std::string>().rfind("Fleet", 0) == 0) fleet = &p;
  }
  ASSERT_NE(fleet, nullptr);
  EXPECT_EQ((*fleet)["type"], "table");
  EXPECT_EQ((*fleet)["transformations"][0]["id"], "merge");
  std::string all;
  for (const auto& t : (*fleet)["targets"]) {
    const auto e = t["expr"].get<std::string>();
    all += e + "\n";
    EXPECT_TRUE(t["instant"].get<bool>()) << e;
    EXPECT_EQ(t["format"], "table") << e;
    const bool per_instance = e.find(" by (instance) ") != std::string::npos ||
                              e.rfind("sparkops:workloads_heavy:sum", 0) == 0;
    EXPECT_TRUE(per_instance) << "not one value per Spark: " << e;
  }
  for (const char* needed :
       {"sparkops_pool_budget_bytes", "sparkops_gpu_temperature_celsius",
        "sparkops_gpu_power_watts", "sparkops_platform_power_ceiling_watts",
        "sparkops:gpu_throttle_seconds:rate5m", "sparkops_gpu_clocks_event_reason_active",
        "sparkops:workloads_heavy:sum"}) {
    EXPECT_NE(all.find(needed), std::string::npos) << "fleet view lacks " << needed;
  }
  const auto overrides = (*fleet)["fieldConfig"]["overrides"];
  EXPECT_EQ(overrides.size(), (*fleet)["targets"].size()) << "every column is named";
}

TEST(GrafanaDashboard, AlertStatePanelShowsTheRulesAlerts) {
  const auto doc = dashboard();
  bool found = false;
  for (const auto& p : doc["panels"]) {
    for (const auto& t : p.value("targets", nlohmann::json::array())) {
      const auto e = t.value("expr", std::string());
      if (e.rfind("ALERTS{", 0) == 0) {
        found = true;
        EXPECT_EQ(p["type"], "table");
      }
    }
  }
  EXPECT_TRUE(found) << "no panel lists ALERTS";
}

TEST(GrafanaDashboard, ImportsWithoutInputsAndUsesTheDatasourceVariable) {
  const std::string text = test::slurp(deploy("grafana/sparkops-dashboard.json"));
  const auto doc = nlohmann::json::parse(text);
  EXPECT_FALSE(doc.contains("__inputs")) << "import must not need manual inputs";
  EXPECT_EQ(text.find("${DS_"), std::string::npos);
  EXPECT_EQ(doc["templating"]["list"][0]["type"], "datasource");
  std::set<int> ids;
  for (const auto& p : doc["panels"]) {
    EXPECT_TRUE(ids.insert(p["id"].get<int>()).second) << "duplicate panel id " << p["id"];
    EXPECT_EQ(p["datasource"]["uid"], "${datasource}") << p["title"];
  }
}

TEST(SystemdUnits, AreHardenedAndReadOnly) {
  for (const char* unit :
       {"systemd/sparkops-exporter.service", "systemd/sparkops-sample@.service"}) {
    const std::string text = test::slurp(deploy(unit));
    for (const char* key :
         {"DynamicUser=yes", "ProtectSystem=strict", "ProtectHome=yes", "NoNewPrivileges=yes",
          "CapabilityBoundingSet=\n", "ExecStart=/usr/bin/sparkops "}) {
      EXPECT_NE(text.find(key), std::string::npos) << unit << " lacks " << key;
    }
    EXPECT_EQ(text.find("PrivateDevices=yes"), std::string::npos)
        << unit << ": NVML needs /dev/nvidia*";
  }
  const std::string exporter = test::slurp(deploy("systemd/sparkops-exporter.service"));
  EXPECT_NE(exporter.find("--listen 127.0.0.1:9877"), std::string::npos) << "loopback by default";
}

// Every Prometheus config in deploy/prometheus/ (single fleet, ConnectX-linked pair, federation).
TEST(PrometheusScrapeConfig, PromtoolAcceptsEveryConfig) {
  if (std::getenv("SPARKOPS_SKIP_PROMETHEUS") != nullptr &&
      std::string_view(std::getenv("SPARKOPS_SKIP_PROMETHEUS")) == "1") {
    GTEST_SKIP() << "SPARKOPS_SKIP_PROMETHEUS=1";
  }
  ASSERT_TRUE(std::filesystem::exists("/usr/bin/promtool")) << "run tools/install-deps.sh --test";
  test::TempDir dir;
  test::write_text(dir / "token", "t\n");
  // The configs name installed paths; promtool checks that they exist, so point them here.
  const std::vector<std::pair<std::string, std::string>> paths = {
      {"/etc/prometheus/sparkops.token", (dir / "token").string()},
      {"/etc/prometheus/sparkops-rules.yml", deploy("prometheus/sparkops-rules.yml").string()}};
  for (const char* config : {"prometheus/sparkops-scrape.yml", "prometheus/sparkops-two-sparks.yml",
                             "prometheus/sparkops-federate.yml"}) {
    std::string text = test::slurp(deploy(config));
    for (const auto& [from, to] : paths) {
      for (auto at = text.find(from); at != std::string::npos; at = text.find(from)) {
        text.replace(at, from.size(), to);
      }
    }
    test::write_text(dir / "prometheus.yml", text);
    const auto r = test::run_process(
        {"/usr/bin/promtool", "check", "config", (dir / "prometheus.yml").string()});
    EXPECT_EQ(r.exit_code, 0) << config << ": " << r.out << r.err;
  }
}

}  // namespace
}  // namespace sparkops::exporter
