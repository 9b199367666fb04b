// `sparkops top` driven for real: --once through pipes, and the interactive view inside a detached
// tmux session (send-keys, capture-pane) on fixture roots with the fake NVML. Every wait polls
// capture-pane until a text appears, with a generous cap; nothing asserts on time.

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "base/text.hpp"
#include "support/fake_nvml.hpp"
#include "support/test_support.hpp"

namespace sparkops {
namespace {

namespace fs = std::filesystem;

std::map<std::string, std::string> fake_nvml_env(const std::string& scenario) {
  auto env = test::fake_nvml_env(scenario);
  env["LANG"] = "C.UTF-8";
  env["LC_ALL"] = "";
  return env;
}

TEST(TopCli, OnceShowsTheFixtureFigures) {
  const auto res = test::run_sparkops({"--root", test::fixture("roots/gb10-finetune").string(),
                                       "top", "--once", "--interval", "0.1", "--gpu", "nvml"},
                                      fake_nvml_env("gb10-counters-advancing"));
  ASSERT_EQ(res.exit_code, 0) << res.err;
  EXPECT_NE(res.out.find("total 121.7"), std::string::npos) << res.out;
  EXPECT_NE(res.out.find("budget 26.0"), std::string::npos) << res.out;
  EXPECT_NE(res.out.find("GPU0 NVIDIA GB10  81°C"), std::string::npos) << res.out;
  // Bits clear, counters advancing (0.5 s and 2 s per snapshot in the scenario): both shown.
  EXPECT_NE(res.out.find("reasons none"), std::string::npos) << res.out;
  EXPECT_NE(res.out.find("pwr_cap +0.50s sw_therm +2.00s"), std::string::npos) << res.out;
  EXPECT_NE(res.out.find("start sw_thermal gpu=0"), std::string::npos) << res.out;
  EXPECT_NE(res.out.find("PROCHOT no"), std::string::npos) << res.out;
  EXPECT_EQ(res.out.find('\x1b'), std::string::npos);  // a pipe gets no colour
}

TEST(TopCli, OnceInAsciiLocaleAndWiderFrame) {
  auto env = fake_nvml_env("gb10");
  env["LANG"] = "C";
  const auto res =
      test::run_sparkops({"--root", test::fixture("procs/vllm_uncapped_orphan").string(), "top",
                          "--once", "--interval", "0.1", "--width", "160", "--gpu", "nvml"},
                         env);
  ASSERT_EQ(res.exit_code, 0) << res.err;
  for (const char c : res.out) ASSERT_LT(static_cast<unsigned char>(c), 0x80U) << res.out;
  EXPECT_NE(res.out.find("reclaimable by flush"), std::string::npos) << res.out;
  EXPECT_NE(res.out.find("orphan"), std::string::npos) << res.out;
  EXPECT_NE(res.out.find("one heavy job at a time: stop PID 6100"), std::string::npos) << res.out;
}

TEST(TopCli, WithoutATerminalIsOneLineAndExit2) {
  const auto res = test::run_sparkops(
      {"--root", test::fixture("roots/gb10-idle").string(), "top", "--gpu", "none"},
      {{"TERM", "xterm"}});
  EXPECT_EQ(res.exit_code, 2);
  EXPECT_EQ(std::count(res.err.begin(), res.err.end(), '\n'), 1) << res.err;
  EXPECT_NE(res.err.find("--once"), std::string::npos) << res.err;
  EXPECT_TRUE(res.out.empty());
}

TEST(TopCli, BadIntervalIsExit2) {
  for (const char* bad : {"0.01", "soon", "2h"}) {
    const auto res = test::run_sparkops({"top", "--once", "--interval", bad, "--gpu", "none"});
    EXPECT_EQ(res.exit_code, 2) << bad;
    EXPECT_NE(res.err.find("--interval"), std::string::npos) << res.err;
  }
}

// ---- tmux ----

std::string find_tmux() {
  const char* path = std::getenv("PATH");
  for (const auto dir : split(path ? path : "/usr/bin", ':')) {
    const fs::path p = fs::path(std::string(dir)) / "tmux";
    if (::access(p.c_str(), X_OK) == 0) return p.string();
  }
  return {};
}

std::string quote(const std::string& s) {
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// One private tmux server per test (its own socket), killed at the end.
class Tmux {
 public:
  explicit Tmux(std::string binary)
      : binary_(std::move(binary)),
        socket_("sparkops-top-" + std::to_string(::getpid()) + "-" + std::to_string(next_id()++)) {}
  ~Tmux() { run({"kill-server"}); }
  test::ProcessResult run(std::vector<std::string> args) const {
    args.insert(args.begin(), {binary_, "-L", socket_});
    return test::run_process(args, {{"TMUX", ""}});
  }
  std::string capture() const { return run({"capture-pane", "-p", "-t", "top"}).out; }
  // Polls the pane until `text` shows (cap: 30 s, far above the 0.25 s refresh).
  bool wait_for(std::string_view text) const {
    for (int i = 0; i < 300; ++i) {
      if (capture().find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds{100});
    }
    return false;
  }
  void keys(const std::string& k) const { run({"send-keys", "-t", "top", k}); }

 private:
  static int& next_id() {
    static int id = 0;
    return id;
  }
  std::string binary_;
  std::string socket_;
};

std::string top_command(const std::string& root, const std::string& scenario,
                        const fs::path& exit_file, const std::string& term) {
  return "env SPARKOPS_NVML_LIB=" + quote(FAKE_NVML_LIB) +
         " FAKE_NVML_SCENARIO=" + quote(test::fixture("nvml/" + scenario).string()) +
         " LANG=C.UTF-8 TERM=" + term + " " + quote(test::sparkops_binary()) + " --root " +
         quote(test::fixture(root).string()) + " top --interval 0.25 --gpu nvml; echo EXIT=$? > " +
         quote(exit_file.string()) + "; sleep 60";
}

bool wait_for_file_text(const fs::path& p, std::string_view text) {
  for (int i = 0; i < 300; ++i) {
    if (fs::exists(p) && test::slurp(p).find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds{100});
  }
  return false;
}

TEST(TopTmux, FrameKeysResizeAndQuit) {
  const std::string tmux = find_tmux();
  if (tmux.empty()) GTEST_SKIP() << "tmux not installed (tools/install-deps.sh --test)";
  test::TempDir dir;
  Tmux t(tmux);
  const auto started = t.run(
      {"new-session", "-d", "-s", "top", "-x", "80", "-y", "24",
       top_command("roots/gb10-finetune", "gb10-counters-advancing", dir / "exit", "screen")});
  ASSERT_EQ(started.exit_code, 0) << started.err;

  ASSERT_TRUE(t.wait_for("GPU0 NVIDIA GB10  81")) << t.capture();
  const std::string first = t.capture();
  EXPECT_NE(first.find("total 121.7"), std::string::npos) << first;
  EXPECT_NE(first.find("PROCHOT no"), std::string::npos) << first;
  EXPECT_NE(first.find("k SIGTERM"), std::string::npos) << first;  // the key line, bottom row
  ASSERT_TRUE(t.wait_for("pwr_cap +0.50s")) << t.capture();        // deltas from the 2nd refresh

  t.keys("?");
  ASSERT_TRUE(t.wait_for("KEYS")) << t.capture();
  t.keys("x");
  ASSERT_TRUE(t.wait_for("WORKLOADS")) << t.capture();
  t.keys("c");
  ASSERT_TRUE(t.wait_for("sort: cap")) << t.capture();
  t.keys("f");
  ASSERT_TRUE(t.wait_for("FROZEN")) << t.capture();
  t.keys("+");
  ASSERT_TRUE(t.wait_for("every 0.5s")) << t.capture();
  t.keys("f");
  t.keys("-");
  ASSERT_TRUE(t.wait_for("every 0.25s")) << t.capture();

  // Resize: the wide layout's labels appear without a key press.
  ASSERT_EQ(t.run({"resize-window", "-t", "top", "-x", "160", "-y", "48"}).exit_code, 0);
  ASSERT_TRUE(t.wait_for("reclaimable by flush")) << t.capture();
  ASSERT_EQ(t.run({"resize-window", "-t", "top", "-x", "80", "-y", "24"}).exit_code, 0);
  ASSERT_TRUE(t.wait_for("flush 25.0")) << t.capture();

  t.keys("q");
  ASSERT_TRUE(wait_for_file_text(dir / "exit", "EXIT=")) << t.capture();
  EXPECT_EQ(test::slurp(dir / "exit"), "EXIT=0\n");
}

TEST(TopTmux, KillOnACapturedRootIsRefusedWithoutAsking) {
  const std::string tmux = find_tmux();
  if (tmux.empty()) GTEST_SKIP() << "tmux not installed (tools/install-deps.sh --test)";
  test::TempDir dir;
  Tmux t(tmux);
  ASSERT_EQ(t.run({"new-session", "-d", "-s", "top", "-x", "80", "-y", "24",
                   top_command("procs/vllm_uncapped_orphan", "gb10", dir / "exit", "screen")})
                .exit_code,
            0);
  ASSERT_TRUE(t.wait_for("2 running")) << t.capture();
  t.keys("Down");
  t.keys("k");
  ASSERT_TRUE(t.wait_for("captured tree")) << t.capture();
  EXPECT_EQ(t.capture().find("Send SIGTERM"), std::string::npos);
  t.keys("q");
  ASSERT_TRUE(wait_for_file_text(dir / "exit", "EXIT=")) << t.capture();
  EXPECT_EQ(test::slurp(dir / "exit"), "EXIT=0\n");
}

TEST(TopTmux, DumbTerminalIsOneLineAndExit2) {
  const std::string tmux = find_tmux();
  if (tmux.empty()) GTEST_SKIP() << "tmux not installed (tools/install-deps.sh --test)";
  test::TempDir dir;
  Tmux t(tmux);
  ASSERT_EQ(t.run({"new-session", "-d", "-s", "top", "-x", "80", "-y", "24",
                   top_command("roots/gb10-idle", "gb10", dir / "exit", "dumb")})
                .exit_code,
            0);
  ASSERT_TRUE(wait_for_file_text(dir / "exit", "EXIT=")) << t.capture();
  EXPECT_EQ(test::slurp(dir / "exit"), "EXIT=2\n");
  EXPECT_TRUE(t.wait_for("top needs a terminal")) << t.capture();
}

// Colour elsewhere: `status` on a terminal paints its warnings; NO_COLOR and --no-color do not.
TEST(TopTmux, StatusIsColouredOnATerminalUnlessNoColor) {
  const std::string tmux = find_tmux();
  if (tmux.empty()) GTEST_SKIP() << "tmux not installed (tools/install-deps.sh --test)";
  test::TempDir dir;
  Tmux t(tmux);
  const std::string status = quote(test::sparkops_binary()) + " --root " +
                             quote(test::fixture("roots/gb10-finetune").string()) +
                             " status --gpu none";
  const std::string cmd = "TERM=screen " + status +
                          " > /dev/tty; echo ===; NO_COLOR=1 TERM=screen " + status +
                          "; echo ===; TERM=screen " + status + " --no-color; echo DONE; sleep 60";
  ASSERT_EQ(t.run({"new-session", "-d", "-s", "top", "-x", "160", "-y", "100", cmd}).exit_code, 0);
  ASSERT_TRUE(t.wait_for("DONE")) << t.capture();
  const std::string with_escapes = t.run({"capture-pane", "-p", "-e", "-t", "top"}).out;
  const auto first = with_escapes.find("===");
  ASSERT_NE(first, std::string::npos);
  const std::string coloured = with_escapes.substr(0, first);
  const std::string plain = with_escapes.substr(first);
  EXPECT_NE(coloured.find("\x1b[33m"), std::string::npos) << coloured;  // the "!" flush line
  EXPECT_NE(coloured.find("\x1b[1m"), std::string::npos) << coloured;   // headings
  EXPECT_EQ(plain.find("\x1b[33m"), std::string::npos) << plain;
}

}  // namespace
}  // namespace sparkops
