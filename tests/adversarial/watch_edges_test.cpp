// The job wrapper's edges (docs/reliability.md "The job wrapper's edges"): watch's own stdout going
// away, a job that writes without end, and processes the job leaves behind. Real child processes
// (sh, yes, setsid, sleep) on a fixture root; no timing in the assertions.
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/test_support.hpp"

namespace sparkops {
namespace {

namespace fs = std::filesystem;

std::size_t count_of(const std::string& text, std::string_view what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::vector<std::string> watch_args(const fs::path& dir, const std::string& job) {
  return {test::sparkops_binary(),
          "--root",
          test::fixture("roots/gb10-idle").string(),
          "watch",
          "--no-preflight",
          "--gpu",
          "none",
          "--dir",
          dir.string(),
          "--",
          "sh",
          "-c",
          job};
}

// `sparkops watch ... | head -c 10`: the reader of watch's stdout leaves after 10 bytes. The job
// still runs to its end (all 2,000,000 bytes reach the log) and watch exits with its status.
TEST(WatchEdges, StdoutReaderGoingAwayLeavesTheJobAndTheLogAlone) {
  const test::TempDir tmp;
  std::vector<std::string> argv = {
      "/bin/bash", "-c", "\"$@\" | head -c 10 >/dev/null; echo \"watch=${PIPESTATUS[0]}\"", "bash"};
  for (auto& a : watch_args(tmp / "run", "yes 0123456789 | head -c 2000000; exit 7"))
    argv.push_back(a);
  const auto r = test::run_process(argv);
  EXPECT_NE(r.out.find("watch=7"), std::string::npos) << r.out << r.err;
  EXPECT_EQ(fs::file_size(tmp / "run/train.log"), 2'000'000u) << r.err;
  EXPECT_EQ(r.err.find("max_log_bytes"), std::string::npos) << r.err;
}

// A job that writes 3 MB against a 1 MiB watch.max_log_bytes: the log stops at or below the cap
// with one line, the terminal still gets every byte and the job's status comes through.
TEST(WatchEdges, LogStopsAtTheConfiguredCapWithOneLine) {
  const test::TempDir tmp;
  const auto config = tmp / "config.toml";
  test::write_text(config, "[watch]\nmax_log_bytes = \"1MiB\"\n");
  const auto r =
      test::run_process(watch_args(tmp / "run", "yes 0123456789 | head -c 3000000; exit 5"),
                        {{"SPARKOPS_CONFIG", config.string()}});
  EXPECT_EQ(r.exit_code, 5) << r.err;
  EXPECT_EQ(r.out.size(), 3'000'000u);
  const auto size = fs::file_size(tmp / "run/train.log");
  EXPECT_LE(size, 1024u * 1024u);
  EXPECT_GT(size, 0u);
  EXPECT_EQ(count_of(r.err, "reached watch.max_log_bytes (1048576 bytes)"), 1u) << r.err;
  EXPECT_NE(r.err.find("the job keeps running"), std::string::npos) << r.err;
}

TEST(WatchEdges, LogCapOutsideItsRangeIsRefused) {
  const test::TempDir tmp;
  const auto config = tmp / "config.toml";
  test::write_text(config, "[watch]\nmax_log_bytes = \"10KiB\"\n");
  const auto r =
      test::run_process(watch_args(tmp / "run", "exit 0"), {{"SPARKOPS_CONFIG", config.string()}});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("watch.max_log_bytes"), std::string::npos) << r.err;
}

nlohmann::json summary_of(const fs::path& dir) {
  return nlohmann::json::parse(test::slurp(dir / "summary.json"));
}

// Shell text that waits until the last background job ($!) has exec'd sleep, so the job never
// exits while its child is still the forked shell or setsid (the name watch reports would vary).
const std::string kUntilExeced = "while [ \"$(cat /proc/$!/comm)\" != sleep ]; do :; done; ";

bool alive(pid_t pid) {
  return ::kill(pid, 0) == 0;
}

// The job starts a sleeper with setsid (a new session and process group, so the job's group never
// reaches it) and exits. Watch names it on stderr and in summary.json, and leaves it running.
TEST(WatchEdges, OrphansAreReportedAndLeftRunning) {
  const test::TempDir tmp;
  const auto r = test::run_process(watch_args(
      tmp / "run", "setsid sleep 300 </dev/null >/dev/null 2>&1 & " + kUntilExeced + "exit 4"));
  EXPECT_EQ(r.exit_code, 4) << r.err;
  const auto j = summary_of(tmp / "run");
  ASSERT_EQ(j["orphans"].size(), 1u) << j.dump();
  const auto& orphan = j["orphans"][0];
  const pid_t pid = orphan["pid"].get<pid_t>();
  EXPECT_EQ(orphan["comm"], "sleep");
  EXPECT_EQ(orphan["session"], pid) << "setsid made it a session leader";
  EXPECT_TRUE(j["orphans_ended"].is_null());
  EXPECT_NE(r.err.find("outlived it and keep running: pid " + std::to_string(pid) + " (sleep)"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(alive(pid));
  ::kill(pid, SIGKILL);
}

// --kill-orphans ends both kinds: a setsid sleeper and one left in the job's own process group.
TEST(WatchEdges, KillOrphansEndsTheSessionLeaderAndTheJobsGroup) {
  const test::TempDir tmp;
  auto args = watch_args(tmp / "run", "setsid sleep 300 </dev/null >/dev/null 2>&1 & " +
                                          kUntilExeced + "sleep 301 </dev/null >/dev/null 2>&1 & " +
                                          kUntilExeced + "exit 0");
  args.insert(args.begin() + 5, "--kill-orphans");
  const auto r = test::run_process(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto j = summary_of(tmp / "run");
  ASSERT_EQ(j["orphans"].size(), 2u) << j.dump();
  ASSERT_FALSE(j["orphans_ended"].is_null()) << j.dump();
  EXPECT_EQ(j["orphans_ended"]["terminated"], 2) << j.dump();
  EXPECT_EQ(j["orphans_ended"]["killed"], 0) << j.dump();
  EXPECT_TRUE(j["orphans_ended"]["survivors"].empty()) << j.dump();
  for (const auto& o : j["orphans"]) {
    const pid_t pid = o["pid"].get<pid_t>();
    EXPECT_FALSE(alive(pid)) << "pid " << pid << " still exists";
    if (alive(pid)) ::kill(pid, SIGKILL);
  }
  EXPECT_NE(r.err.find("--kill-orphans: ended 2 process(es)"), std::string::npos) << r.err;
}

// A job that leaves nothing behind reports nothing.
TEST(WatchEdges, AJobThatCleansUpHasNoOrphans) {
  const test::TempDir tmp;
  const auto r = test::run_process(watch_args(tmp / "run", "sleep 0.1 & wait; exit 0"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(summary_of(tmp / "run")["orphans"].empty());
  EXPECT_EQ(r.err.find("outlived"), std::string::npos) << r.err;
}

// A file-size limit (`ulimit -f`, systemd's LimitFSIZE=) reached by train.log: before, SIGXFSZ
// killed watch (exit 153) and the job's status was lost; now the write fails with EFBIG, the log
// stops with one line naming it, and watch exits with the job's status.
TEST(WatchEdges, FileSizeLimitStopsTheLogNotWatch) {
  const test::TempDir tmp;
  std::vector<std::string> argv = {"/bin/sh", "-c", "ulimit -f 8; exec \"$0\" \"$@\""};
  auto watch = watch_args(tmp / "run", "head -c 100000 /dev/zero; exit 3");
  watch.insert(watch.begin() + 5, "--no-pty");
  argv.insert(argv.end(), watch.begin(), watch.end());
  const auto r = test::run_process(argv);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(r.out.size(), 100'000u);
  EXPECT_NE(r.err.find("train.log: File too large"), std::string::npos) << r.err;
  EXPECT_LE(fs::file_size(tmp / "run/train.log"), 8u * 1024u);
}

// sparkops ignores SIGXFSZ (a write past a file-size limit is an error it reports); the job must
// not inherit that: it gets the default disposition, as it would from a shell. SigIgn in
// /proc/self/status is the ignored-signal mask; SIGXFSZ is bit 24 (signal 25).
TEST(WatchEdges, JobDoesNotInheritIgnoredFileSizeSignal) {
  const test::TempDir tmp;
  auto argv = watch_args(tmp / "run", "grep '^SigIgn:' /proc/self/status");
  argv.insert(argv.begin() + 5, "--no-pty");
  const auto r = test::run_process(argv);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto at = r.out.find("SigIgn:");
  ASSERT_NE(at, std::string::npos) << r.out;
  const auto mask = std::stoull(r.out.substr(at + 7), nullptr, 16);
  EXPECT_EQ(mask & (1ull << (SIGXFSZ - 1)), 0u) << r.out;
}

}  // namespace
}  // namespace sparkops
