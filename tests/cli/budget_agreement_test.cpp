// Same machine, same budget, in every command: each command that reports a pool budget is run on
// every captured root in tests/fixtures/roots/ and must report the budget `status` reports. (Before
// the pool came from one place, `procs` ignored the cgroup limit: 106 GiB beside status's 22 GiB
// on container-cgroup.)

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/fake_nvml.hpp"
#include "support/test_support.hpp"

namespace sparkops {
namespace {

std::vector<std::string> fixture_roots() {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(test::fixture("roots"))) {
    if (e.is_directory()) names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::uint64_t json_budget(const test::ProcessResult& r, const nlohmann::json::json_pointer& where) {
  EXPECT_LT(r.exit_code, 2) << r.err;
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out;
  if (j.is_discarded() || !j.contains(where)) {
    ADD_FAILURE() << "no " << where.to_string() << " in " << r.out;
    return 0;
  }
  return j.at(where).get<std::uint64_t>();
}

// The "  budget ..." line of the status table (the watch pre-flight prints the same table).
std::string budget_line(const std::string& text) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    const std::string line = text.substr(pos, end - pos);
    if (line.rfind("  budget ", 0) == 0) return line;
    pos = end + 1;
  }
  return {};
}

class BudgetAgreement : public ::testing::TestWithParam<std::string> {};

// The "budget N" of top's POOL line (GiB, one decimal), or "" when the frame has none.
std::string top_budget(const std::string& frame) {
  const std::size_t at = frame.find(" budget ");
  if (at == std::string::npos) return {};
  const std::size_t from = at + 8;
  return frame.substr(from, frame.find_first_of(" \n", from) - from);
}

TEST_P(BudgetAgreement, StatusPlanProcsWatchServeAndTopReportOneBudget) {
  const std::string root = test::fixture("roots/" + GetParam()).string();
  const auto status = test::run_sparkops({"--root", root, "status", "--json", "--gpu", "none"});
  const std::uint64_t budget = json_budget(status, "/pool/budget_bytes"_json_pointer);
  ASSERT_GT(budget, 0U) << status.out;

  const auto plan = test::run_sparkops({"--root", root, "plan", "--params", "7B", "--json"});
  EXPECT_EQ(json_budget(plan, "/budget_bytes"_json_pointer), budget) << "plan";

  const auto procs = test::run_sparkops({"--root", root, "procs", "--json", "--gpu", "none"});
  EXPECT_EQ(json_budget(procs, "/pool/budget_bytes"_json_pointer), budget) << "procs";

  const auto table = test::run_sparkops({"--root", root, "status", "--gpu", "none"});
  const std::string line = budget_line(table.out);
  ASSERT_FALSE(line.empty()) << table.out;
  test::TempDir dir;
  const auto watch = test::run_sparkops(
      {"--root", root, "watch", "--gpu", "none", "--dir", (dir / "run").string(), "--", "true"});
  EXPECT_EQ(watch.exit_code, 0) << watch.err;
  EXPECT_EQ(budget_line(watch.err), line) << "watch pre-flight:\n" << watch.err;

  // serve's textfile collector writes the same budget as a metric.
  const auto textfile = dir / "textfile";
  std::filesystem::create_directories(textfile);
  const auto serve = test::run_sparkops(
      {"--root", root, "serve", "--gpu", "none", "--textfile", textfile.string(), "--once"});
  EXPECT_EQ(serve.exit_code, 0) << serve.err;
  EXPECT_NE(test::slurp(textfile / "sparkops.prom")
                .find("\nsparkops_pool_budget_bytes " + std::to_string(budget) + "\n"),
            std::string::npos)
      << "serve --textfile";

  // top's frame shows the budget in GiB with one decimal.
  const auto top = test::run_sparkops({"--root", root, "top", "--once", "--gpu", "none"});
  EXPECT_EQ(top.exit_code, 0) << top.err;
  char gib[32];
  std::snprintf(gib, sizeof gib, "%.1f", static_cast<double>(budget) / (1ULL << 30));
  EXPECT_EQ(top_budget(top.out), gib) << "top --once:\n" << top.out;
}

// The training budget, one rule: on a discrete card (the H200 scenario: NVML reports device
// memory) it is the GPU's free memory, not the host pool's budget; on a GB10 (NVML: memory not
// supported, unified) it is the pool's. status, plan and procs say the same.
struct GpuCase {
  const char* root;
  const char* scenario;
  const char* source;
};

// gtest prints a parameter without PrintTo as its bytes (here three pointers), which would put
// addresses into the test's listed name.
void PrintTo(const GpuCase& c, std::ostream* os) {
  *os << c.root << "/" << c.scenario << " -> " << c.source;
}

class TrainingBudgetAgreement : public ::testing::TestWithParam<GpuCase> {};

TEST_P(TrainingBudgetAgreement, StatusPlanAndProcsUseOneRule) {
  const GpuCase c = GetParam();
  const std::string root = test::fixture(std::string("roots/") + c.root).string();
  const auto env = test::fake_nvml_env(c.scenario);
  const auto status = test::run_sparkops({"--root", root, "status", "--json"}, env);
  const auto s = nlohmann::json::parse(status.out);
  ASSERT_TRUE(s["training_budget"].is_object()) << status.out;
  EXPECT_EQ(s["training_budget"]["source"], c.source);
  const std::uint64_t budget = s["training_budget"]["bytes"].get<std::uint64_t>();
  if (std::string(c.source) == "gpu_memory") {
    // The scenario's memory_free, not the host's MemAvailable - overhead.
    EXPECT_EQ(budget, 150121480192ULL);
    EXPECT_NE(budget, s["pool"]["budget_bytes"].get<std::uint64_t>());
  } else {
    EXPECT_EQ(budget, s["pool"]["budget_bytes"].get<std::uint64_t>());
  }
  const auto plan = test::run_sparkops({"--root", root, "plan", "--params", "7B", "--json"}, env);
  EXPECT_EQ(json_budget(plan, "/budget_bytes"_json_pointer), budget) << "plan";
  const auto p = nlohmann::json::parse(plan.out);
  EXPECT_EQ(p["budget_source"], c.source) << plan.out;
  // The figure held against the budget: the peak on the GPU on a discrete card (the host side
  // stays in host memory), the pool's peak (max of training and load) where memory is unified.
  const auto held = p["peak_bytes"].get<std::uint64_t>();
  if (std::string(c.source) == "gpu_memory") {
    EXPECT_GE(held, p["train_peak_device_bytes"].get<std::uint64_t>());
    EXPECT_LT(held, p["train_peak_pool_bytes"].get<std::uint64_t>());
  } else {
    EXPECT_EQ(held, std::max(p["train_peak_pool_bytes"].get<std::uint64_t>(),
                             p["load_peak_pool_bytes"].get<std::uint64_t>()));
  }
  const auto procs = test::run_sparkops({"--root", root, "procs", "--json"}, env);
  EXPECT_EQ(json_budget(procs, "/training_budget/bytes"_json_pointer), budget) << "procs";
  // The text says where a discrete budget comes from.
  const auto text = test::run_sparkops({"--root", root, "status"}, env);
  EXPECT_EQ(text.out.find("training budget") != std::string::npos,
            std::string(c.source) == "gpu_memory")
      << text.out;
}

INSTANTIATE_TEST_SUITE_P(Gpus, TrainingBudgetAgreement,
                         ::testing::Values(GpuCase{"x86-bare", "h200", "gpu_memory"},
                                           GpuCase{"gb10-idle", "gb10", "unified_pool"}),
                         [](const auto& test_param) {
                           return std::string(test_param.param.scenario);
                         });

INSTANTIATE_TEST_SUITE_P(FixtureRoots, BudgetAgreement, ::testing::ValuesIn(fixture_roots()),
                         [](const ::testing::TestParamInfo<std::string>& param_info) {
                           std::string name = param_info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace sparkops
