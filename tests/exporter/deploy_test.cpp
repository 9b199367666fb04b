// deploy/: the Grafana dashboard only queries exported metrics, and the units and scrape config
// carry what their headers promise.

#include <regex>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "exporter/metric_catalogue.hpp"
#include "support/test_support.hpp"

namespace sparkops {
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

TEST(GrafanaDashboard, EveryExpressionNamesAnExportedMetric) {
  const auto doc = nlohmann::json::parse(test::slurp(deploy("grafana/sparkops-dashboard.json")));
  std::set<std::string> exported;
  for (const auto& def : metric_catalogue()) exported.insert(std::string(def.name));
  std::vector<std::string> exprs;
  collect_exprs(doc, exprs);
  ASSERT_GT(exprs.size(), 10U);
  const std::regex metric(R"(\bsparkops_[a-z0-9_]+)");
  for (const auto& e : exprs) {
    auto begin = std::sregex_iterator(e.begin(), e.end(), metric);
    EXPECT_NE(begin, std::sregex_iterator()) << "expression names no sparkops metric: " << e;
    for (auto it = begin; it != std::sregex_iterator(); ++it) {
      EXPECT_TRUE(exported.count(it->str())) << it->str() << " in \"" << e << "\" is not exported";
    }
  }
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

TEST(PrometheusScrapeConfig, PromtoolAcceptsIt) {
  if (std::getenv("SPARKOPS_SKIP_PROMETHEUS") != nullptr &&
      std::string_view(std::getenv("SPARKOPS_SKIP_PROMETHEUS")) == "1") {
    GTEST_SKIP() << "SPARKOPS_SKIP_PROMETHEUS=1";
  }
  ASSERT_TRUE(std::filesystem::exists("/usr/bin/promtool")) << "run tools/install-deps.sh --test";
  test::TempDir dir;
  // The config names a token file; promtool checks that it exists, so point it at a scratch one.
  std::string text = test::slurp(deploy("prometheus/sparkops-scrape.yml"));
  const std::string from = "/etc/prometheus/sparkops.token";
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from)) {
    text.replace(at, from.size(), (dir / "token").string());
  }
  test::write_text(dir / "token", "t\n");
  test::write_text(dir / "prometheus.yml", text);
  const auto r = test::run_process(
      {"/usr/bin/promtool", "check", "config", (dir / "prometheus.yml").string()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

}  // namespace
}  // namespace sparkops
