// `sparkops status`, the binary: exit codes, flags, the root from the environment, overheads from
// config and flags, JSON well-formed, no escapes through a pipe. The collector, its table and JSON
// are tested in tests/status/status_report_test.cpp.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/fake_nvml.hpp"
#include "support/test_support.hpp"

namespace sparkops {
namespace {

// The binary: exit codes, flags, JSON well-formed.
TEST(StatusCli, JsonAgainstFixtureRootWithFakeNvml) {
  const auto res = test::run_sparkops(
      {"--root", test::fixture("roots/gb10-idle").string(), "status", "--json", "--gpu", "nvml"},
      test::fake_nvml_env("gb10"));
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const auto j = nlohmann::json::parse(res.out);
  EXPECT_EQ(j["gpu"]["backend"], "nvml");
  EXPECT_EQ(j["gpu"]["devices"][0]["name"], "NVIDIA GB10");
  EXPECT_GT(j["pool"]["budget_bytes"].get<std::uint64_t>(), 0u);
}

TEST(StatusCli, RootFromEnvironmentAndOverheadFlag) {
  const auto res =
      test::run_sparkops({"status", "--json", "--gpu", "none", "--overhead", "10GiB"},
                         {{"SPARKOPS_ROOT", test::fixture("roots/gb10-idle").string()}});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const auto j = nlohmann::json::parse(res.out);
  EXPECT_EQ(j["pool"]["overhead_bytes"], 10ULL << 30);
  EXPECT_EQ(j["pool"]["total_bytes"], 127600748ULL * 1024);
}

TEST(StatusCli, OverheadFromConfigFileAndFlagWins) {
  test::TempDir dir;
  test::write_text(dir / "c.toml", "[pool]\noverhead = \"6GiB\"\n");
  const std::map<std::string, std::string> env{{"SPARKOPS_CONFIG", (dir / "c.toml").string()}};
  const auto root = test::fixture("roots/gb10-idle").string();
  auto res = test::run_sparkops({"--root", root, "status", "--json", "--gpu", "none"}, env);
  ASSERT_EQ(res.exit_code, 0) << res.err;
  EXPECT_EQ(nlohmann::json::parse(res.out)["pool"]["overhead_bytes"], 6ULL << 30);
  res = test::run_sparkops({"--root", root, "status", "--json", "--gpu", "none", "--overhead", "2"},
                           env);
  EXPECT_EQ(nlohmann::json::parse(res.out)["pool"]["overhead_bytes"], 2ULL << 30);
}

TEST(StatusCli, BadOverheadIsOneLineExit2) {
  const auto res = test::run_sparkops({"status", "--overhead", "lots", "--gpu", "none"});
  EXPECT_EQ(res.exit_code, 2);
  EXPECT_NE(res.err.find("--overhead"), std::string::npos);
  EXPECT_EQ(std::count(res.err.begin(), res.err.end(), '\n'), 1);
}

TEST(StatusCli, RootWithoutMeminfoExits1WithNote) {
  test::TempDir dir;
  const auto res = test::run_sparkops({"--root", dir.path().string(), "status", "--gpu", "none"});
  EXPECT_EQ(res.exit_code, 1);
  EXPECT_NE(res.out.find("meminfo"), std::string::npos);
}

TEST(StatusCli, RunsOnThisMachineWithoutGpu) {
  // Exercises the live path ("/"), asserting only that it reads and exits 0: no expected values.
  const auto res = test::run_sparkops({"status", "--gpu", "none"});
  EXPECT_EQ(res.exit_code, 0) << res.err;
  EXPECT_NE(res.out.find("POOL"), std::string::npos);
}

// Colour is for terminals: a capable TERM on a pipe still gives plain text.
TEST(StatusCli, ThroughAPipeHasNoEscapes) {
  const auto res = test::run_sparkops(
      {"--root", test::fixture("roots/gb10-finetune").string(), "status", "--gpu", "none"},
      {{"TERM", "xterm-256color"}});
  EXPECT_EQ(res.out.find('\x1b'), std::string::npos);
}

}  // namespace
}  // namespace sparkops
