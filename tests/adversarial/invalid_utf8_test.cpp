// Text from the machine or a user is bytes (issue: invalid UTF-8 anywhere took commands down with
// exit 70 and `serve` with std::terminate). Any user can name a process with prctl(PR_SET_NAME);
// a sensor driver, a kernel log line, a job's output path and `watch --dir` can hold such bytes
// too. Each command below reads a fixture root or file holding them and must answer normally,
// writing only well-formed UTF-8 with U+FFFD where the bytes were, and no control character a
// terminal would act on.
#include <algorithm>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/utf8.hpp"
#include "support/test_support.hpp"

namespace sparkops {
namespace {

namespace fs = std::filesystem;

const std::string kFffd(kReplacementCharacter);

// gb10-finetune with the trainers' processes, one of them renamed to bytes that are not UTF-8
// (and an escape sequence), and its hottest sensor's chip and label renamed likewise.
class HostileNames : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = tmp_ / "root";
    fs::copy(test::fixture("roots/gb10-finetune"), root_, fs::copy_options::recursive);
    const fs::path procs = test::fixture("procs/trainers/proc");
    for (const auto& entry : fs::directory_iterator(procs)) {
      const auto name = entry.path().filename().string();
      const bool pid =
          std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; });
      if (pid || name == "stat" || name == "uptime") {
        fs::copy(entry.path(), root_ / "proc" / name,
                 fs::copy_options::recursive | fs::copy_options::skip_existing);
      }
    }
    const fs::path p = root_ / "proc/3101";
    std::string stat = test::slurp(p / "stat");
    stat.replace(stat.find('('), stat.find(')') - stat.find('(') + 1, "(py\xFF\xFE\x1b[2J)");
    test::write_text(p / "stat", stat);
    std::string status = test::slurp(p / "status");
    status.replace(0, status.find('\n'), "Name:\tpy\xFF\xFE\x1b[2J");
    test::write_text(p / "status", status);
    constexpr char kCmdline[] = "python\0train_\xED\xA0\x80\xC3.py\0--out\0/data/\xFF";
    test::write_text(p / "cmdline", std::string(kCmdline, sizeof kCmdline));  // NUL-terminated
    const fs::path chip = root_ / "sys/class/hwmon/hwmon1";
    test::write_text(chip / "name", "nv\xFFme\n");
    test::write_text(chip / "temp1_label", "Comp\xFE\x1b]0;x\x07site\n");
    test::write_text(chip / "temp1_input", "99000\n");
  }

  std::string root() const { return root_.string(); }

  test::TempDir tmp_;
  fs::path root_;
};

// Machine formats (JSON, Prometheus) carry any well-formed text, escaped by their own rules.
void expect_well_formed(const std::string& text, const std::string& what) {
  EXPECT_TRUE(is_valid_utf8(text)) << what;
  EXPECT_NE(text.find(kFffd), std::string::npos) << what << ": the hostile name is not shown";
}

// What a terminal shows must also hold no control character it would act on.
void expect_clean(const std::string& text, const std::string& what) {
  expect_well_formed(text, what);
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << what << ": an escape reached the output";
}

TEST_F(HostileNames, ProcsJsonAndTableAnswer) {
  const auto json = test::run_sparkops({"--root", root(), "procs", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  expect_clean(json.out, "procs --json");
  EXPECT_FALSE(nlohmann::json::parse(json.out, nullptr, false).is_discarded());
  EXPECT_NE(json.out.find("py" + kFffd + kFffd + "\\u001b[2J"), std::string::npos) << json.out;

  const auto table = test::run_sparkops({"--root", root(), "procs"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  expect_clean(table.out, "procs");
}

TEST_F(HostileNames, StatusJsonAndTableAnswer) {
  const auto json = test::run_sparkops({"--root", root(), "status", "--json", "--gpu", "none"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  expect_clean(json.out, "status --json");
  EXPECT_FALSE(nlohmann::json::parse(json.out, nullptr, false).is_discarded());

  const auto table = test::run_sparkops({"--root", root(), "status", "--gpu", "none"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  expect_clean(table.out, "status");
}

TEST_F(HostileNames, ServeTextfileKeepsExporting) {
  // --once runs exactly the tick the HTTP server runs every interval.
  const fs::path out = tmp_ / "prom";
  fs::create_directory(out);
  const auto r = test::run_sparkops(
      {"--root", root(), "serve", "--gpu", "none", "--textfile", out.string(), "--once"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = test::slurp(out / "sparkops.prom");
  expect_well_formed(text, "sparkops.prom");
}

TEST(HostileText, OomVictimNameIsReplaced) {
  test::TempDir tmp;
  std::string log =
      test::slurp(test::fixture("oom/corpus/dmesg-oom-kill-global-unified-memory.txt"));
  for (std::size_t at = log.find("lmcache"); at != std::string::npos; at = log.find("lmcache")) {
    log.replace(at, 7, "lm\xFF\xC3\x1b[31m");
  }
  test::write_text(tmp / "oom.txt", log);
  for (const bool json : {true, false}) {
    std::vector<std::string> args{"oom", "--log", (tmp / "oom.txt").string()};
    if (json) args.emplace_back("--json");
    const auto r = test::run_sparkops(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    expect_clean(r.out, json ? "oom --json" : "oom");
  }
}

TEST(HostileText, WatchWithNonUtf8DirKeepsTheJobsExitStatus) {
  test::TempDir tmp;
  const fs::path dir = tmp / "run-\xFF\xFE";
  const auto r = test::run_sparkops({"--root", test::fixture("roots/gb10-idle").string(), "watch",
                                     "--gpu", "none", "--no-preflight", "--json", "--dir",
                                     dir.string(), "--", "sh", "-c", "echo step 1; exit 3"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  const std::string summary = test::slurp(dir / "summary.json");
  expect_clean(summary, "summary.json");
  EXPECT_FALSE(nlohmann::json::parse(summary, nullptr, false).is_discarded());
}

}  // namespace
}  // namespace sparkops
