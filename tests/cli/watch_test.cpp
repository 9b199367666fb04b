// `sparkops watch` end to end: the real binary running real child processes (tests/fixtures/watch
// shell scripts), a fixture root and the fake libnvidia-ml, so no value comes from this machine.
#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/text.hpp"
#include "support/background_process.hpp"
#include "support/fake_nvml.hpp"
#include "support/test_support.hpp"

namespace sparkops {
namespace {

std::string script(std::string_view name) {
  return test::fixture(std::string("watch/") + std::string(name)).string();
}

// sparkops watch started in the background with stdout/stderr in files (100 MB must not sit in a
// pipe nobody reads), in `dir`, with HOME in dir/home.
class Watch {
 public:
  Watch(std::vector<std::string> args, const test::TempDir& dir,
        std::string_view root = "roots/gb10-idle")
      : Watch(std::move(args), dir, test::fixture(root)) {}
  Watch(std::vector<std::string> args, const test::TempDir& dir, const std::filesystem::path& root)
      : dir_(dir), process_(argv_of(std::move(args), root), options(dir)) {}
  void signal(int sig) const { process_.signal(sig); }
  int wait() { return process_.wait(); }
  std::string out() const { return test::slurp(dir_.path() / "stdout"); }
  std::string err() const { return test::slurp(dir_.path() / "stderr"); }

 private:
  static std::vector<std::string> argv_of(std::vector<std::string> args,
                                          const std::filesystem::path& root) {
    std::vector<std::string> argv{test::sparkops_binary(), "--root", root.string(), "watch"};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }
  static test::BackgroundOptions options(const test::TempDir& dir) {
    test::BackgroundOptions o;
#ifdef FAKE_NVML_LIB
    o.env = test::fake_nvml_env("gb10-counters-advancing");
#endif
    o.home = dir.path() / "home";
    o.cwd = dir.path();
    o.out = dir.path() / "stdout";
    o.err = dir.path() / "stderr";
    return o;
  }
  const test::TempDir& dir_;
  test::BackgroundProcess process_;
};

using test::eventually;

bool file_contains(const std::filesystem::path& p, std::string_view needle) {
  std::ifstream f(p);
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return text.find(needle) != std::string::npos;
}

nlohmann::json summary(const test::TempDir& dir) {
  return nlohmann::json::parse(test::slurp(dir / "run/summary.json"));
}

TEST(WatchCli, CorpusOutputPassesThroughByteForByteAndIntoTheLog) {
  test::TempDir dir;
  const auto log = test::fixture("watch/hf_trainer_head.log");
  // --no-pty: on pipes the log keeps the order the two streams were written in. On ptys (the
  // default) each stream's bytes are still exact, but the kernel hands pty output over
  // asynchronously, so where the streams meet in the log is the scheduler's (WatchPty tests).
  Watch w({"--dir", "run", "--interval", "0.2", "--no-preflight", "--no-pty", "--",
           script("emit_file.sh"), log.string()},
          dir);
  ASSERT_EQ(w.wait(), 0) << w.err();
  EXPECT_EQ(w.out(), test::slurp(log));
  EXPECT_NE(w.err().find("a line on stderr\n"), std::string::npos);
  const std::string logged = test::slurp(dir / "run/train.log");
  EXPECT_NE(logged.find(test::slurp(log)), std::string::npos);
  EXPECT_NE(logged.find("a line on stderr\n"), std::string::npos);
  // The sidecar is in the trainlog format: "<ISO ms>\t<offset>", offsets non-decreasing.
  const std::string times = test::slurp(dir / "run/train.log.times");  // outlives the views below
  const auto lines = split_lines(times);
  ASSERT_FALSE(lines.empty());
  EXPECT_TRUE(ends_with(split(lines[0], '\t')[0], "Z")) << lines[0];
  EXPECT_EQ(split(lines[0], '\t')[1], "0");
}

TEST(WatchCli, ExitStatusIsPassedThrough) {
  test::TempDir dir;
  Watch w({"--dir", "run", "--no-preflight", "--", script("exit3.sh")}, dir);
  EXPECT_EQ(w.wait(), 3);
  EXPECT_EQ(w.out(), "working\n");
  EXPECT_NE(w.err().find("exit        3 (exited with status 3)"), std::string::npos) << w.err();
  EXPECT_EQ(summary(dir)["exit_code"], 3);
}

TEST(WatchCli, MissingCommandExits127WithOneLine) {
  test::TempDir dir;
  Watch w({"--dir", "run", "--no-preflight", "--", "/nonexistent/train.py"}, dir);
  EXPECT_EQ(w.wait(), 127);
  EXPECT_NE(w.err().find("sparkops: /nonexistent/train.py: No such file or directory"),
            std::string::npos)
      << w.err();
}

TEST(WatchCli, NoCommandIsBadInput) {
  test::TempDir dir;
  Watch w({"--dir", "run", "--no-preflight"}, dir);
  EXPECT_EQ(w.wait(), 2);
}

TEST(WatchCli, FakeSlowdownPrintsAnEventWithTheThermalSampleAndTheSummary) {
  test::TempDir dir;
  Watch w({"--dir", "run", "--interval", "0.2", "--no-preflight", "--", script("slowdown.sh")},
          dir);
  ASSERT_EQ(w.wait(), 0) << w.err();
  const std::string err = w.err();
  EXPECT_NE(err.find("sparkops: event "), std::string::npos) << err;
  EXPECT_NE(
      err.find(
          "start cause=slowdown step=25 first_step=21 seconds=0.500 baseline_s=0.100 ratio=5.00"),
      std::string::npos)
      << err;
#ifdef FAKE_NVML_LIB
  EXPECT_NE(err.find("gpu_temp_c="), std::string::npos) << err;
#endif
  EXPECT_TRUE(file_contains(dir / "run/events.log", "cause=slowdown step=25"));
  EXPECT_NE(err.find("steps       40 (tqdm format)"), std::string::npos) << err;
  EXPECT_NE(err.find("baseline 0.100 s/step, final 0.500 s/step"), std::string::npos) << err;
  const auto j = summary(dir);
  EXPECT_EQ(j["steps"], 40);
  ASSERT_EQ(j["slowdowns"].size(), 1U);
  EXPECT_EQ(j["slowdowns"][0]["start"], 21);  // analyze's name for it
  EXPECT_GE(j["samples"].get<int>(), 1);
  // thermal.log is the sample command's file, in its default format.
  const std::string thermal = test::slurp(dir / "run/thermal.log");
  EXPECT_EQ(split_lines(thermal)[0], "timestamp,temperature.gpu,power.draw");
}

#ifdef FAKE_NVML_LIB
TEST(WatchCli, ThrottleEpisodesFromTheSamplerAreEvents) {
  test::TempDir dir;
  Watch w({"--dir", "run", "--interval", "0.05", "--no-preflight", "--", script("slowdown.sh")},
          dir);
  ASSERT_EQ(w.wait(), 0) << w.err();
  EXPECT_NE(w.err().find("start cause=sw_thermal gpu=0"), std::string::npos) << w.err();
  EXPECT_TRUE(file_contains(dir / "run/events.log", "start cause=sw_thermal gpu=0"));
  EXPECT_GE(summary(dir)["throttle_episodes"].get<int>(), 1);
}
#endif

TEST(WatchCli, SigkilledChildExits137WithLadderAdvice) {
  test::TempDir dir;
  Watch w({"--dir", "run", "--no-preflight", "--ladder-state", (dir / "ladder.json").string(), "--",
           script("sigkill_self.sh")},
          dir);
  EXPECT_EQ(w.wait(), 137);
  const std::string err = w.err();
  EXPECT_NE(err.find("killed by signal 9 (SIGKILL)"), std::string::npos) << err;
  EXPECT_NE(err.find("the job died of an OOM"), std::string::npos) << err;
  EXPECT_NE(err.find("host_oom_killer"), std::string::npos) << err;
  const auto j = summary(dir);
  EXPECT_EQ(j["oom"]["evidence"], "inferred");
  EXPECT_EQ(j["next_step"]["id"], "1");  // nothing tried yet: flush first, never batch
}

TEST(WatchCli, CudaOomInTheOutputIsClassifiedAndGetsTheNextStep) {
  test::TempDir dir;
  Watch w({"--dir", "run", "--no-preflight", "--ladder-state", (dir / "ladder.json").string(), "--",
           script("cuda_oom.sh")},
          dir);
  EXPECT_EQ(w.wait(), 1);
  const auto j = summary(dir);
  EXPECT_EQ(j["oom"]["kind"], "cuda_allocator");
  EXPECT_EQ(j["oom"]["phase"], "step");
  EXPECT_EQ(j["next_step"]["id"], "1");
}

TEST(WatchCli, SigtermIsForwardedToTheJob) {
  test::TempDir dir;
  Watch w({"--dir", "run", "--no-preflight", "--", script("term_ok.sh")}, dir);
  ASSERT_TRUE(eventually([&] { return w.out().find("ready") != std::string::npos; }));
  w.signal(SIGTERM);
  EXPECT_EQ(w.wait(), 143);
  EXPECT_NE(w.out().find("got TERM"), std::string::npos);
  EXPECT_NE(w.err().find("forwarded SIGTERM to the job"), std::string::npos) << w.err();
}

TEST(WatchCli, JobIgnoringSigtermIsKilledByTheSecondSignal) {
  test::TempDir dir;
  Watch w({"--dir", "run", "--no-preflight", "--", script("ignore_term.sh")}, dir);
  ASSERT_TRUE(eventually([&] { return w.out().find("ready") != std::string::npos; }));
  w.signal(SIGINT);
  ASSERT_TRUE(eventually([&] { return w.err().find("forwarded SIGINT") != std::string::npos; }));
  w.signal(SIGINT);
  EXPECT_EQ(w.wait(), 137);
  EXPECT_NE(w.err().find("sent by sparkops after the second Ctrl-C"), std::string::npos) << w.err();
  EXPECT_TRUE(summary(dir)["oom"].is_null());  // our own SIGKILL is not an OOM
}

TEST(WatchCli, DaemonHoldingThePipeDoesNotHangWatch) {
  test::TempDir dir;
  Watch w({"--dir", "run", "--no-preflight", "--", script("daemon.sh")}, dir);
  EXPECT_EQ(w.wait(), 0);  // returns long before the 20 s daemon ends
  EXPECT_EQ(w.out(), "parent done\n");
}

// The log on a full filesystem: a 64 KiB tmpfs filled with ballast (a symlink to /dev/full is no
// longer written through: docs/reliability.md "Files sparkops writes"). Skipped where the test may
// not mount.
TEST(WatchCli, DiskFullLogKeepsTheTerminalOutput) {
  if (::geteuid() != 0) GTEST_SKIP() << "mounting a tmpfs needs root";
  test::TempDir dir;
  const auto mnt = dir / "full";
  std::filesystem::create_directories(mnt);
  if (::mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=64k") != 0) {
    GTEST_SKIP() << "mount -t tmpfs not permitted here (container without CAP_SYS_ADMIN)";
  }
  struct Unmount {
    std::filesystem::path at;
    ~Unmount() { ::umount2(at.c_str(), MNT_DETACH); }
  } unmount{mnt};
  {
    const int fd = ::open((mnt / "ballast").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    const std::string block(4096, 'x');
    while (::write(fd, block.data(), block.size()) > 0) {
    }
    ::close(fd);
  }
  const auto log = test::fixture("watch/hf_trainer_head.log");
  Watch w({"--dir", "run", "--log", "full/train.log", "--no-preflight", "--",
           script("emit_file.sh"), log.string()},
          dir);
  ASSERT_EQ(w.wait(), 0) << w.err();
  EXPECT_EQ(w.out(), test::slurp(log));
  const std::string err = w.err();
  EXPECT_NE(err.find("No space left on device; the job keeps running"), std::string::npos) << err;
  EXPECT_EQ(err.find("No space left on device; the job keeps running"),
            err.rfind("No space left on device; the job keeps running"));  // said once
  EXPECT_TRUE(summary(dir)["files_failed"].get<bool>());
}

TEST(WatchCli, PreflightShowsStatusAndPlanWithoutAnchorWhenNothingWasMeasured) {
  test::TempDir dir;
  Watch w({"--dir", "run", "--interval", "0.05", "--model", "Llama-3.1-8B", "--method", "lora",
           "--", script("slowdown.sh")},
          dir, test::fixture("roots/gb10-finetune"));
  ASSERT_EQ(w.wait(), 0) << w.err();
  const std::string err = w.err();
  EXPECT_NE(err.find("POOL"), std::string::npos) << err;
  EXPECT_NE(err.find("Llama-3.1-8B"), std::string::npos) << err;
  const auto j = summary(dir);
  ASSERT_FALSE(j["plan_peak_bytes"].is_null());
  // A static fixture root: pool use never rises over the launch baseline, so no anchor is made.
  EXPECT_EQ(j["peak_over_launch_bytes"], 0);
  EXPECT_TRUE(j["anchor_file"].is_null());
}

TEST(WatchCli, MeasuredPeakIsAppendedAsAnAnchorTheNextPlanReads) {
  test::TempDir dir;
  const auto root = dir / "root";
  std::filesystem::copy(test::fixture("roots/gb10-idle"), root,
                        std::filesystem::copy_options::recursive);
  Watch w({"--dir", "run", "--interval", "0.05", "--no-preflight", "--model", "Llama-3.1-8B",
           "--method", "lora", "--batch", "2", "--seq", "4096", "--", script("grow_pool.sh"),
           root.string()},
          dir, root);
  ASSERT_EQ(w.wait(), 0) << w.err();
  const auto anchors = dir / "home/.local/share/sparkops/anchors.jsonl";
  const std::string text = test::slurp(anchors);
  const auto lines = split_lines(text);
  ASSERT_EQ(lines.size(), 1U) << text;
  const auto a = nlohmann::json::parse(lines[0]);
  EXPECT_EQ(a["model"], "Llama-3.1-8B");
  EXPECT_EQ(a["method"], "lora");
  EXPECT_EQ(a["kind"], "measured_peak");
  EXPECT_EQ(a["peak_pool_bytes"], 20971520ULL * 1024);  // 118566368 kB - 97594848 kB
  EXPECT_EQ(a["batch"], 2);
  EXPECT_EQ(a["seq"], 4096);
  EXPECT_EQ(a["source"], "watch");
  EXPECT_NE(w.err().find("anchor      measured peak appended to"), std::string::npos) << w.err();
  // The plan command reads it back as a user anchor.
  const auto plan = test::run_sparkops({"--root", root.string(), "plan", "Llama-3.1-8B", "--json"},
                                       {{"HOME", (dir / "home").string()}});
  EXPECT_NE(plan.out.find("watch-"), std::string::npos) << plan.out << plan.err;
}

TEST(WatchCli, MemoryPressureIsAnEvent) {
  test::TempDir dir;
  const auto root = dir / "root";
  std::filesystem::copy(test::fixture("roots/gb10-idle"), root,
                        std::filesystem::copy_options::recursive);
  Watch w({"--dir", "run", "--interval", "0.05", "--no-preflight", "--", script("grow_pool.sh"),
           root.string(), "2000000"},
          dir, root);
  ASSERT_EQ(w.wait(), 0) << w.err();
  const std::string err = w.err();
  const auto at = err.find("start cause=memory_pressure");
  ASSERT_NE(at, std::string::npos) << err;
  EXPECT_NE(err.find("mem_available_gib=1.9 mem_total_gib=121.7", at), std::string::npos) << err;
  EXPECT_TRUE(file_contains(dir / "run/events.log", "end cause=memory_pressure reason=run_ended"));
  EXPECT_EQ(summary(dir)["memory_pressure_episodes"], 1);
}

TEST(WatchCli, PreflightNamesAHeavyWorkloadAlreadyRunning) {
  test::TempDir dir;
  Watch w({"--dir", "run", "--gpu", "none", "--", script("exit3.sh")}, dir,
          test::fixture("procs/vllm_uncapped_orphan"));
  EXPECT_EQ(w.wait(), 3);
  EXPECT_NE(w.err().find("warning: heavy GPU workload running: PID 5000 vllm"), std::string::npos)
      << w.err();
}

TEST(WatchCli, WontFitPlanRefusesToLaunchUnlessForced) {
  test::TempDir dir;
  Watch w(
      {"--dir", "run", "--model", "Llama-3.1-70B", "--method", "full", "--", script("exit3.sh")},
      dir);
  EXPECT_EQ(w.wait(), 1);
  EXPECT_EQ(w.out(), "");  // never launched
  EXPECT_NE(w.err().find("won't fit; not launching"), std::string::npos) << w.err();
  test::TempDir dir2;
  Watch forced({"--dir", "run", "--force", "--model", "Llama-3.1-70B", "--method", "full", "--",
                script("exit3.sh")},
               dir2);
  EXPECT_EQ(forced.wait(), 3);
}

TEST(WatchCli, HundredMegabytesPassThroughByteForByte) {
  test::TempDir dir;
  const auto input = dir / "big.bin";
  {
    std::ofstream f(input, std::ios::binary);
    std::string block(1 << 20, '\0');
    std::uint64_t x = 0x9E3779B97F4A7C15ULL;
    for (int mb = 0; mb < 100; ++mb) {
      for (auto& c : block) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        c = (x & 0x3F) == 0 ? '\n' : static_cast<char>(x);
      }
      f.write(block.data(), static_cast<std::streamsize>(block.size()));
    }
  }
  Watch w({"--dir", "run", "--no-preflight", "--", "cat", input.string()}, dir);
  ASSERT_EQ(w.wait(), 0) << w.err();
  const auto size = std::filesystem::file_size(input);
  ASSERT_EQ(std::filesystem::file_size(dir / "stdout"), size);
  ASSERT_EQ(std::filesystem::file_size(dir / "run/train.log"), size);
  const auto same = [&](const std::filesystem::path& p) {
    return test::run_process({"/usr/bin/cmp", "-s", input.string(), p.string()}).exit_code == 0;
  };
  EXPECT_TRUE(same(dir / "stdout"));
  EXPECT_TRUE(same(dir / "run/train.log"));
}

// The job runs on pseudo-terminals by default: both streams are terminals, and the bytes pass
// unchanged (no \n -> \r\n); --no-pty keeps the pipes.
TEST(WatchPty, JobSeesTerminalsAndItsBytesPassUnchanged) {
  const std::string job =
      "test -t 1 && echo tty-out; test -t 2 && echo tty-err >&2; printf 'a\\nb\\r\\nc'; exit 7";
  {
    test::TempDir dir;
    Watch w({"--dir", "run", "--no-preflight", "--", "/bin/sh", "-c", job}, dir);
    EXPECT_EQ(w.wait(), 7) << w.err();
    EXPECT_EQ(w.out(), "tty-out\na\nb\r\nc");
    EXPECT_NE(w.err().find("tty-err\n"), std::string::npos) << w.err();
    // Both streams in the log; their interleaving is the scheduler's, as with pipes.
    const std::string log = test::slurp(dir / "run/train.log");
    EXPECT_NE(log.find("a\nb\r\nc"), std::string::npos) << log;
    EXPECT_NE(log.find("tty-err\n"), std::string::npos) << log;
    EXPECT_EQ(log.size(), std::string("tty-out\ntty-err\na\nb\r\nc").size()) << log;
  }
  {
    test::TempDir dir;
    Watch w({"--dir", "run", "--no-preflight", "--no-pty", "--", "/bin/sh", "-c", job}, dir);
    EXPECT_EQ(w.wait(), 7) << w.err();
    EXPECT_EQ(w.out(), "a\nb\r\nc");
    EXPECT_EQ(w.err().find("\ntty-err\n"), std::string::npos) << w.err();  // the summary quotes it
  }
}

// A plain Python print loop (block-buffered into a pipe) reaches the log line by line.
TEST(WatchPty, PrintLoopStreamsLineByLine) {
  if (!std::filesystem::exists("/usr/bin/python3")) GTEST_SKIP() << "no /usr/bin/python3";
  test::TempDir dir;
  Watch w({"--dir", "run", "--no-preflight", "--", "/usr/bin/env", "-u", "PYTHONUNBUFFERED",
           "/usr/bin/python3", script("print_loop.py"), "run/train.log"},
          dir);
  EXPECT_EQ(w.wait(), 0) << w.out() << w.err();
  EXPECT_EQ(w.out(), "ready\nstreamed\n");
}

// The job's ptys have the real terminal's size, and a resize reaches the job as SIGWINCH with the
// new size. sparkops runs under script(1), which gives it a terminal whose size stty sets. The
// resize is one TIOCSWINSZ: `stty cols C rows R` sets each dimension with an ioctl of its own, and
// sparkops (in the shell's process group, no job control) may pass on the first, half-done size
// before the second lands; the job, woken by it, would print that.
TEST(WatchPty, JobSeesTheTerminalSizeAndItsChanges) {
  if (!std::filesystem::exists("/usr/bin/python3") || !std::filesystem::exists("/usr/bin/script"))
    GTEST_SKIP() << "needs /usr/bin/python3 and script(1)";
  test::TempDir dir;
  const std::string cmd =
      // `;` not `&&`: the `&` below must background sparkops alone (a backgrounded list gets
      // /dev/null as stdin, which stty needs to be the terminal).
      "cd '" + dir.path().string() + "'; stty cols 100 rows 30; '" + test::sparkops_binary() +
      "' --root '" + test::fixture("roots/gb10-idle").string() +
      "' --gpu none watch --no-preflight --dir run -- /usr/bin/python3 '" + script("winch.py") +
      "' ready 2>err.txt & pid=$!; n=0; while [ ! -e '" + (dir / "ready").string() +
      "' ] && [ $n -lt 1500 ]; do sleep 0.02; n=$((n+1)); done; /usr/bin/python3 -c 'import "
      "fcntl, struct, termios; fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack(\"HHHH\", 50, 140, "
      "0, 0))'; "
      "kill -WINCH $pid; wait $pid";
  const auto r = test::run_process({"/usr/bin/script", "-qec", cmd, "/dev/null"});
  EXPECT_EQ(r.exit_code, 0) << r.out << test::slurp(dir / "err.txt");
  const std::string log = test::slurp(dir / "run/train.log");
  EXPECT_NE(log.find("start 100x30\n"), std::string::npos) << log;
  EXPECT_NE(log.find("resized 140x50\n"), std::string::npos) << log;
}

// Two runs started together in one folder never share a run folder (the default name has a
// one-second resolution).
TEST(WatchCli, TwoRunsInTheSameSecondGetTwoFolders) {
  test::TempDir dir;
  Watch a({"--no-preflight", "--", "/bin/sh", "-c", "echo one"}, dir);
  test::TempDir dir_b;  // its own stdout/stderr files, the same working folder below
  std::vector<std::string> args{"--root", test::fixture("roots/gb10-idle").string(),
                                "--gpu",  "none",
                                "watch",  "--no-preflight",
                                "--",     "/bin/sh",
                                "-c",     "echo two"};
  std::string cmd = "cd '" + dir.path().string() + "' && exec '" + test::sparkops_binary() + "'";
  for (const auto& x : args) cmd += " '" + x + "'";
  const auto b = test::run_process({"/bin/sh", "-c", cmd});
  EXPECT_EQ(a.wait(), 0) << a.err();
  EXPECT_EQ(b.exit_code, 0) << b.err;
  std::vector<std::string> logs;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    if (e.path().filename().string().rfind("sparkops-run-", 0) != 0) continue;
    EXPECT_TRUE(std::filesystem::exists(e.path() / "summary.json")) << e.path();
    logs.push_back(test::slurp(e.path() / "train.log"));
  }
  std::sort(logs.begin(), logs.end());
  EXPECT_EQ(logs, (std::vector<std::string>{"one\n", "two\n"}));
}

}  // namespace
}  // namespace sparkops
